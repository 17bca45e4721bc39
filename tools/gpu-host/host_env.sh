# What a bare GPU host needs beside CUDA and the CUDA build of PyTorch, from the .deb files of fetch-debs.sh:
# unpacked without installing, and an env.sh that programs built here and mpirun run under. Sourced.
# shellcheck shell=bash

# unpack_debs DEB_DIR PREFIX: every .deb of DEB_DIR unpacked into PREFIX, with the fixes a foreign prefix
# needs (mpirun's names, Gloo's CMake package that names /usr/lib, .pc files that name prefix=/usr).
unpack_debs() {
  local debs=$1 prefix=$2 deb wrapper lib=$2/usr/lib/x86_64-linux-gnu
  mkdir -p "$prefix"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
  ln -sf orterun "$prefix/usr/bin/mpirun"
  ln -sf orterun "$prefix/usr/bin/mpiexec"
  for wrapper in mpicc mpicxx; do [ -e "$prefix/usr/bin/$wrapper" ] || ln -sf "$wrapper.openmpi" "$prefix/usr/bin/$wrapper"; done
  rm -rf "$prefix/usr/share/cmake/Gloo"
  sed -i "s|=/usr|=$prefix/usr|" "$lib"/pkgconfig/*.pc "$prefix"/usr/share/pkgconfig/*.pc 2> /dev/null || true
}

# write_env PREFIX: PREFIX/env.sh for the unpacked libraries, the host's torch and pip's NCCL, Open MPI as
# root and in containers. Fails naming the python when it has no torch.
write_env() {
  local prefix=$1 python site libs dir lib=$1/usr/lib/x86_64-linux-gnu
  python=${FUSETRAIN_PYTHON:-$(command -v python3)}
  site=$("$python" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))') ||
    { echo "$python has no torch: install the CUDA build of PyTorch" >&2; return 1; }
  libs=$lib:$lib/openmpi/lib:$lib/pmix2/lib:$lib/hdf5/serial:$prefix/usr/lib:$site/torch/lib:/usr/local/cuda/lib64
  for dir in "$site"/nvidia/*/lib; do libs=$libs:$dir; done
  cat > "$prefix/env.sh" <<ENV
export OPAL_PREFIX=$prefix/usr OPAL_LIBDIR=$lib/openmpi/lib OPAL_DATADIR=$prefix/usr/share/openmpi
export OPAL_PKGDATADIR=$prefix/usr/share/openmpi OPAL_SYSCONFDIR=$prefix/etc/openmpi
export OPAL_INCLUDEDIR=$lib/openmpi/include PMIX_INSTALL_PREFIX=$prefix/usr
export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix
# the host's own paths first (its driver and CUDA libraries win), then the unpacked ones
export LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}$libs
export PATH=$prefix/usr/bin\${PATH:+:\$PATH}
export CMAKE_PREFIX_PATH=$prefix/usr:$lib/cmake\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}
export CPATH=$lib/openmpi/include:$prefix/usr/include/hdf5/serial:$prefix/usr/include\${CPATH:+:\$CPATH}
export PKG_CONFIG_PATH=$lib/pkgconfig:$prefix/usr/share/pkgconfig
export FUSETRAIN_PYTHON=$python FUSETRAIN_NCCL_DIR=$site/nvidia/nccl
# mpirun refuses root without these (containers often run as root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# containers forbid the cross-memory attach of Open MPI's shared-memory transport: copy through the segment
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Python's output reaches logs as it is printed, not when a buffer fills
export PYTHONUNBUFFERED=1
ENV
}
