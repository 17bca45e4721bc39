# The system libraries and programs fusetrain's build looks for, in one file that CMakeLists.txt and
# tools/setup.sh's probe (tools/setup/probe) both include, so that setup asks exactly what the build asks.
#
# Included (not called) so that the variables and imported targets land in the includer's scope. Nothing
# here stops the configure: each dependency not found is appended to FUSETRAIN_MISSING (Gloo, optional, to
# FUSETRAIN_MISSING_OPTIONAL) under its name in tools/setup/dependencies.txt, which maps it to its Debian
# package, Spack spec and usual module name. Reads BUILD_TESTING (GoogleTest and mpirun are the tests' needs)
# and FUSETRAIN_GLOO (AUTO, ON or OFF); sets FUSETRAIN_HAVE_GLOO, GLOO_INCLUDE_DIR and GLOO_LIBRARY.
set(FUSETRAIN_MISSING "")
set(FUSETRAIN_MISSING_OPTIONAL "")

# ft_dependency(NAME FOUND_VARIABLE): NAME is missing unless FOUND_VARIABLE is true.
macro(ft_dependency name found)
  if(NOT ${found})
    list(APPEND FUSETRAIN_MISSING ${name})
  endif()
endmacro()

find_package(MPI COMPONENTS C)
ft_dependency(MPI MPI_C_FOUND)
find_package(HDF5 COMPONENTS C)
ft_dependency(HDF5 HDF5_FOUND)
find_package(yaml-cpp)
ft_dependency(yaml-cpp yaml-cpp_FOUND)
find_package(nlohmann_json 3)
ft_dependency(nlohmann_json nlohmann_json_FOUND)
find_package(Boost COMPONENTS program_options)
ft_dependency(Boost Boost_FOUND)
find_package(OpenSSL COMPONENTS Crypto)
ft_dependency(OpenSSL OpenSSL_FOUND)
find_package(PNG)
ft_dependency(PNG PNG_FOUND)
find_package(ZLIB)
ft_dependency(ZLIB ZLIB_FOUND)
find_package(PkgConfig)
ft_dependency(PkgConfig PKG_CONFIG_FOUND)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(TURBOJPEG IMPORTED_TARGET libturbojpeg)
endif()
ft_dependency(libturbojpeg TURBOJPEG_FOUND)

if(BUILD_TESTING)
  find_package(GTest)
  ft_dependency(GTest GTest_FOUND)
  find_program(FT_MPIRUN_FOUND NAMES mpirun mpiexec)
  ft_dependency(mpirun FT_MPIRUN_FOUND)
endif()

set(FUSETRAIN_HAVE_GLOO OFF)
if(NOT FUSETRAIN_GLOO STREQUAL "OFF")
  find_package(Gloo QUIET)
  find_path(GLOO_INCLUDE_DIR gloo/allreduce.h)
  find_library(GLOO_LIBRARY gloo)
  if(GLOO_INCLUDE_DIR AND GLOO_LIBRARY)
    set(FUSETRAIN_HAVE_GLOO ON)
  elseif(FUSETRAIN_GLOO STREQUAL "ON")
    list(APPEND FUSETRAIN_MISSING Gloo)
  else()
    list(APPEND FUSETRAIN_MISSING_OPTIONAL Gloo)
  endif()
endif()
