# phasegate container image: a static binary on distroless/static (no shell, no
# git, ~2 MB base). The GitHub Action runs the prebuilt image, so a workflow run
# never compiles Go. Docker actions run as root, so there is no USER line.

FROM golang:1.24-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# The same command is run by cmd/phasegate/build_test.go, which checks that the
# binary is static and small.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false -ldflags="-s -w -X github.com/phasegate/phasegate/internal/cli.version=${VERSION}" -o /out/phasegate ./cmd/phasegate

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/phasegate /phasegate
# `phasegate serve` (the GitHub App) listens on 8080; the action ignores it.
EXPOSE 8080
ENTRYPOINT ["/phasegate"]
CMD ["action"]
