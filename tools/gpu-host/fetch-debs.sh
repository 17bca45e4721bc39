#!/usr/bin/env bash
# Downloads (does not install) the Debian 12 packages fusetrain needs beside CUDA and PyTorch, for a GPU
# host that has no package manager: run it on any Debian machine with apt, then carry DIR to the host.
# usage: tools/gpu-host/fetch-debs.sh DIR
set -euo pipefail
dir=${1:?usage: fetch-debs.sh DIR}
mkdir -p "$dir"
cd "$dir"
packages=(
  # Open MPI 4.1 and the libraries it loads at run time
  libopenmpi3 openmpi-bin openmpi-common libopenmpi-dev libpmix2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1
  libnl-3-200 libnl-route-3-200 librdmacm1 libpsm2-2 libpsm-infinipath1
  libnuma1 libmunge2 libxnvctrl0 libltdl7
  # HDF5 (serial) and its run-time libraries
  libhdf5-103-1 libhdf5-dev libhdf5-cpp-103-1 libhdf5-hl-100 libhdf5-hl-cpp-100
  libsz2 libaec0 libcurl3-gnutls libnghttp2-14 librtmp1 libssh2-1 libpsl5
  libldap-2.5-0 libsasl2-2 libbrotli1
  # configuration and command line
  libyaml-cpp0.7 libyaml-cpp-dev nlohmann-json3-dev
  libboost-program-options1.74.0 libboost-program-options1.74-dev libboost-program-options-dev libboost1.74-dev
  # Gloo collectives, image decoding
  libgloo0 libgloo-dev libhiredis0.14 libturbojpeg0 libturbojpeg0-dev libjpeg62-turbo
  # headers and pkg-config a bare host may lack; GoogleTest for the test suite
  libssl-dev libssl3 libpng-dev libpng16-16 zlib1g-dev zlib1g pkgconf pkgconf-bin libpkgconf3
  pkg-config libgtest-dev
  # what Debian's libcurl3-gnutls (pulled in by HDF5) needs on an Ubuntu 24.04 host
  libunistring2 libidn2-0 libgnutls30 libnettle8 libhogweed6 libp11-kit0 libtasn1-6 libgmp10 libffi8
)
apt-get download "${packages[@]}"
echo "fetch-debs: $(find . -maxdepth 1 -name '*.deb' | wc -l) packages in $dir"
