# phasegate container image: a static binary on distroless/static (no shell, no
# git, ~2 MB base). The GitHub Action runs the prebuilt image, so a workflow run
# never compiles Go. Docker actions run as root, so there is no USER line.

# The builder's Go is go.mod's toolchain line (a patched standard library;
# internal/archtest checks that they agree). The image sets GOTOOLCHAIN=local.
FROM golang:1.27.3-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# What `phasegate version` prints: docker build --build-arg VERSION=v1.2.3
# --build-arg COMMIT=$(git rev-parse HEAD) --build-arg DATE=$(git log -1 --format=%cI).
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
# The same command is run by cmd/phasegate/build_test.go, which checks that the
# binary is static and small. (Releases are built by GoReleaser with the same
# flags: .goreleaser.yaml, deploy/release.Dockerfile.)
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false -ldflags="-s -w -X github.com/phasegate/phasegate/internal/cli.version=${VERSION} -X github.com/phasegate/phasegate/internal/cli.commit=${COMMIT} -X github.com/phasegate/phasegate/internal/cli.date=${DATE}" -o /out/phasegate ./cmd/phasegate

FROM gcr.io/distroless/static-debian12
# OCI labels (the release image gets the same from .goreleaser.yaml). An ARG
# is scoped to its stage, so VERSION and COMMIT are declared again here.
ARG VERSION=dev
ARG COMMIT=
LABEL org.opencontainers.image.title="phasegate" \
      org.opencontainers.image.description="Checks the artifacts AI coding-agent pipelines commit and gates their commits" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/phasegate/phasegate" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
COPY --from=build /out/phasegate /phasegate
# `phasegate serve` (the GitHub App) listens on 8080; the action ignores it.
EXPOSE 8080
ENTRYPOINT ["/phasegate"]
CMD ["action"]
