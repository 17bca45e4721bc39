# `cmake --install build [--prefix DIR]`: the programs, the loopback library, the job scripts, the configs and
# the docs under a prefix in the GNU layout, and module files (Lmod, Tcl) that put that prefix to use.
include(GNUInstallDirs)
set(FUSETRAIN_MODULE_DEPENDS "" CACHE STRING
    "Modules the generated module files load first, ;-separated (e.g. openmpi/4.1.6;cuda/12.4): the site's MPI")

# The installed programs find LibTorch (and CUDA, NCCL and libraries from modules) through their RPATH: every
# folder outside this tree that they were linked from. No LD_LIBRARY_PATH is needed.
set_target_properties(fusetrain fusetrain-prep PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS fusetrain fusetrain-prep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ft_loopback_only LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# The job scripts that run from an install (the coursework's need the checkout's tools and stay there).
set(ft_share ${CMAKE_INSTALL_DATADIR}/fusetrain)
install(PROGRAMS jobs/workstation/run.sh DESTINATION ${ft_share}/jobs/workstation)
install(PROGRAMS jobs/slurm/train.sbatch jobs/slurm/multinode.sbatch jobs/slurm/sweep.sbatch
        DESTINATION ${ft_share}/jobs/slurm)
install(DIRECTORY configs/ DESTINATION ${ft_share}/configs)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# The module files name the prefix, which `cmake --install --prefix` may choose only now: they are written at
# install time (FusetrainModulefiles.cmake), then installed like any file.
set(ft_modules ${CMAKE_BINARY_DIR}/modulefiles)
install(CODE "
  set(FT_VERSION \"${PROJECT_VERSION}\")
  set(FT_DIRS \"BIN=${CMAKE_INSTALL_BINDIR};LIB=${CMAKE_INSTALL_LIBDIR};SHARE=${ft_share};DOC=${CMAKE_INSTALL_DOCDIR}\")
  set(FT_DEPENDS \"${FUSETRAIN_MODULE_DEPENDS}\")
  set(FT_TEMPLATES \"${CMAKE_CURRENT_LIST_DIR}\")
  set(FT_OUT \"${ft_modules}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/FusetrainModulefiles.cmake\")")
install(FILES ${ft_modules}/lmod/${PROJECT_VERSION}.lua DESTINATION ${CMAKE_INSTALL_DATADIR}/modulefiles/lmod/fusetrain)
install(FILES ${ft_modules}/tcl/${PROJECT_VERSION} DESTINATION ${CMAKE_INSTALL_DATADIR}/modulefiles/tcl/fusetrain)
