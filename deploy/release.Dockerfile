# The release image, built by GoReleaser (.goreleaser.yaml, dockers_v2) with
# buildx for linux/amd64 and linux/arm64: it copies the static binary
# GoReleaser built for each platform and compiles nothing. The Dockerfile at
# the repository's root builds the same image from source.
FROM gcr.io/distroless/static-debian12
# The version, revision and source labels come from GoReleaser (dockers_v2
# labels in .goreleaser.yaml), which knows the tag and the commit.
LABEL org.opencontainers.image.title="phasegate" \
      org.opencontainers.image.licenses="Apache-2.0"
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/phasegate /phasegate
# `phasegate serve` (the GitHub App) listens on 8080; the action ignores it.
EXPOSE 8080
# Docker actions run as root (the workspace belongs to the runner), so there
# is no USER line.
ENTRYPOINT ["/phasegate"]
CMD ["action"]
