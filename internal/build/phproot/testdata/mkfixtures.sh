#!/bin/sh
# Makes the archive fixtures of phproot's tests: three throwaway OpenPGP
# keys (one whose user id names Debian 13, one Debian 12, one neither),
# a small Packages index and an InRelease that lists it, signed by the
# first two keys. Run it again only to change them (the keys differ each run).
set -eu
cd "$(dirname "$0")"
G=$(mktemp -d); trap 'rm -rf "$G"' EXIT
export GNUPGHOME="$G"
for uid in "Test Archive Automatic Signing Key (13/trixie)" "Test Archive Automatic Signing Key (12/bookworm)" "Some Other Key"; do
  gpg --batch --quiet --passphrase '' --quick-gen-key "$uid" ed25519 sign never
done
gpg --batch --export "(13/trixie)" > trixie.gpg
gpg --batch --export "(12/bookworm)" > bookworm.gpg
gpg --batch --export "Some Other Key" > other.gpg
gzip -9nc Packages > Packages.gz
sum=$(sha256sum Packages.gz | cut -d' ' -f1); size=$(stat -c %s Packages.gz)
{
  printf 'Origin: Debian\nLabel: Debian\nSuite: stable\nCodename: trixie\nArchitectures: amd64 arm64\nComponents: main\nSHA256:\n'
  for a in amd64 arm64; do printf ' %s %16d main/binary-%s/Packages.gz\n' "$sum" "$size" "$a"; done
} > Release
gpg --batch --yes --clearsign -u "(13/trixie)" -u "(12/bookworm)" -o InRelease Release
rm Release
