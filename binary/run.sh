#!/usr/bin/env bash
# The binary action's one step (binary/action.yml): installs the phasegate
# release binary for this runner, verified, and runs it.
#
#   run.sh [ARG...]    installs, then runs `phasegate ARG...` (the action
#                      runs `run.sh action`); with no ARG, prints the path
#                      of the installed binary
#
# The release is PHASEGATE_VERSION (v0.1.2 or 0.1.2), else
# PHASEGATE_ACTION_REF (github.action_ref) when it is a version tag. The
# archive is the one .goreleaser.yaml names for RUNNER_OS (Linux, macOS,
# Windows) and RUNNER_ARCH (X64, ARM64):
# phasegate_<version>_<os>_<arch>.tar.gz (.zip on Windows).
#
# The binary comes from RUNNER_TOOL_CACHE/phasegate/<version>/<arch> when
# this runner installed it before; otherwise the archive and SHA256SUMS are
# downloaded from PHASEGATE_RELEASE_URL/<tag>/ (default: the GitHub
# release). The archive must match its SHA256SUMS entry and, when gh is
# installed and INPUT_TOKEN is set, its build-provenance attestation
# (gh attestation verify, signed by the release workflow); anything else
# is refused, and nothing refused is cached or run.
#
# phasegate reads its inputs as GitHub names them for a container action,
# INPUT_<NAME> with the name upper-cased and its '-' kept (INPUT_FAIL-ON).
# No shell variable can hold a '-', so the action's step sets INPUT_FAIL_ON
# and this script passes it on as INPUT_FAIL-ON, with env.
#
# Needs bash (3.2 or later), curl, tar or unzip, and sha256sum or shasum.
set -euo pipefail

# The inputs of action.yml that phasegate reads (internal/binaryaction
# checks this list against binary/action.yml).
inputs=(path token format post-outcomes fail-on config sarif-file results-file cache-file)
default_release_url=https://github.com/phasegate/phasegate/releases/download

# fail prints an error annotation and exits 1. The message is escaped as a
# workflow command's data, so no value in it can start a command.
fail() {
  local msg="$*"
  msg=${msg//%/%25}
  msg=${msg//$'\r'/%0D}
  msg=${msg//$'\n'/%0A}
  echo "::error title=phasegate binary action::$msg" >&2
  exit 1
}

log() { echo "phasegate: $*" >&2; }

# The functions below set these globals rather than print them: a failure
# inside a command substitution would not stop the script (errexit does not
# reach into one before bash 4.4's inherit_errexit, and macOS has bash 3.2).
version='' goos='' goarch='' url='' bin='' work=''

# release_version sets version, the release to install, without its 'v'.
release_version() {
  local ref=${PHASEGATE_ACTION_REF:-}
  local semver='^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'
  version=${PHASEGATE_VERSION:-}
  if [ -z "$version" ]; then
    if [[ ! $ref =~ ^v ]] || [[ ! $ref =~ $semver ]]; then
      fail "which release? The action is used at '${ref:-(no ref)}', not at a version tag (v0.1.2): set its input version"
    fi
    version=$ref
  fi
  [[ $version =~ $semver ]] || fail "version '$version' is not a release version (v0.1.2, v0.1.2-rc.1)"
  version=${version#v}
}

# platform sets goos and goarch, the archive's, for RUNNER_OS and RUNNER_ARCH.
platform() {
  case ${RUNNER_OS:-} in
    Linux) goos=linux ;;
    macOS) goos=darwin ;;
    Windows) goos=windows ;;
    *) fail "phasegate is released for RUNNER_OS Linux, macOS and Windows, not '${RUNNER_OS:-}'" ;;
  esac
  case ${RUNNER_ARCH:-} in
    X64) goarch=amd64 ;;
    ARM64) goarch=arm64 ;;
    *) fail "phasegate is released for RUNNER_ARCH X64 and ARM64, not '${RUNNER_ARCH:-}'" ;;
  esac
}

# release_url sets url, the releases' base URL: https, or http to the
# loopback (a test's server), never plain http over a network.
release_url() {
  url=${PHASEGATE_RELEASE_URL:-$default_release_url}
  url=${url%/}
  case $url in
    https://?*) ;;
    http://127.0.0.1:* | http://127.0.0.1/* | http://localhost:* | http://localhost/*) ;;
    *) fail "release-url must be an https URL, not '$url'" ;;
  esac
}

# attest_repo prints the repository whose release workflow must have
# attested the archive: the one release-url downloads from, or phasegate's
# for a mirror.
attest_repo() {
  if [[ $url =~ ^https://github\.com/([^/]+/[^/]+)/releases/download$ ]]; then
    echo "${BASH_REMATCH[1]}"
  else
    echo phasegate/phasegate
  fi
}

sha256() {
  # From stdin: a file name would be escaped in the output if it held a '\'
  # (a Windows path).
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum <"$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 <"$1" | cut -d' ' -f1
  else
    fail "neither sha256sum nor shasum is installed: cannot verify the download"
  fi
}

download() {
  curl --fail --silent --show-error --location --retry 3 --retry-delay 2 \
    --proto '=https,http' --proto-redir '=https' --output "$2" "$1" ||
    fail "could not download $1"
}

# verify_checksum refuses the archive unless SHA256SUMS has exactly one
# entry for it and the archive's digest is that entry's.
verify_checksum() {
  local dir=$1 archive=$2 tag=$3 want got
  want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$dir/SHA256SUMS")
  case $want in
    "") fail "SHA256SUMS of $tag has no entry for $archive: refusing to run it" ;;
    *[!0-9a-f]*) fail "SHA256SUMS of $tag has no single SHA-256 for $archive: refusing to run it" ;;
  esac
  [ ${#want} -eq 64 ] || fail "SHA256SUMS of $tag has no single SHA-256 for $archive: refusing to run it"
  got=$(sha256 "$dir/$archive") || exit 1
  [ "$got" = "$want" ] ||
    fail "checksum mismatch: $archive is $got, SHA256SUMS of $tag says $want: refusing to run it"
  log "$archive matches SHA256SUMS of $tag (sha256 $got)"
}

# verify_attestation checks the archive's build provenance with gh, when gh
# is installed and there is a token to ask GitHub with.
verify_attestation() {
  local dir=$1 archive=$2 repo=$3
  if ! command -v gh >/dev/null 2>&1 || [ -z "${INPUT_TOKEN:-}" ]; then
    log "gh or a token is missing: the build provenance of $archive is not verified (its checksum is)"
    return
  fi
  if ! (cd "$dir" && GH_TOKEN=$INPUT_TOKEN gh attestation verify "$archive" --repo "$repo" \
    --signer-workflow "$repo/.github/workflows/release.yml") >"$dir/attestation.log" 2>&1; then
    cat "$dir/attestation.log" >&2
    fail "$archive has no build-provenance attestation of $repo's release workflow that verifies (gh attestation verify): refusing to run it"
  fi
  log "$archive was built by $repo/.github/workflows/release.yml (gh attestation verify)"
}

# extract unpacks the binary alone, by a relative name: GNU tar would read
# a Windows path's drive letter as a remote host.
extract() {
  local dir=$1 archive=$2 exe=$3
  case $archive in
    *.zip)
      if command -v unzip >/dev/null 2>&1; then
        (cd "$dir" && unzip -q -o "$archive" "$exe")
      else
        (cd "$dir" && powershell -NoProfile -NonInteractive -Command \
          "Expand-Archive -LiteralPath '$archive' -DestinationPath unzipped; Move-Item unzipped/$exe ." )
      fi
      ;;
    *) (cd "$dir" && tar -xzf "$archive" "$exe") ;;
  esac >/dev/null 2>&1 || fail "$archive has no $exe"
  [ -f "$dir/$exe" ] || fail "$archive has no $exe"
}

# install sets bin: the binary from the tool cache, or downloaded into
# work, verified, and put in the tool cache.
install() {
  local tag=v$version exe=phasegate archive=phasegate_${version}_${goos}_${goarch}.tar.gz cache
  if [ "$goos" = windows ]; then
    exe=phasegate.exe
    archive=phasegate_${version}_${goos}_${goarch}.zip
  fi
  cache=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}}/phasegate/$version/$goarch
  bin=$cache/$exe
  if [ -f "$cache.complete" ] && [ -x "$bin" ]; then
    log "phasegate $tag from the tool cache ($cache)"
    return
  fi
  release_url
  log "downloading $url/$tag/$archive"
  download "$url/$tag/SHA256SUMS" "$work/SHA256SUMS"
  download "$url/$tag/$archive" "$work/$archive"
  verify_checksum "$work" "$archive" "$tag"
  verify_attestation "$work" "$archive" "$(attest_repo)"
  extract "$work" "$archive" "$exe"
  rm -rf "$cache" "$cache.complete"
  mkdir -p "$cache"
  mv "$work/$exe" "$bin"
  chmod +x "$bin"
  touch "$cache.complete"
  log "phasegate $tag installed in $cache"
}

main() {
  local name upper var env_args=()
  work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/phasegate.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  release_version
  platform
  install
  if [ $# -eq 0 ]; then
    echo "$bin"
    return
  fi
  for name in "${inputs[@]}"; do
    upper=$(echo "$name" | tr '[:lower:]' '[:upper:]')
    var=INPUT_${upper//-/_}
    if [ -n "${!var+set}" ]; then
      env_args+=("INPUT_$upper=${!var}")
    fi
  done
  rm -rf "$work"
  trap - EXIT
  exec env ${env_args[@]+"${env_args[@]}"} "$bin" "$@"
}

main "$@"
