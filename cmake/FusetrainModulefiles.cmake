# Run by `cmake --install` (FusetrainInstall.cmake): writes the Lmod and Tcl module files for the prefix being
# installed to, from modulefile.lua.in and modulefile.tcl.in, into FT_OUT/lmod and FT_OUT/tcl.
# Reads FT_VERSION, FT_DIRS (NAME=dir pairs, relative to the prefix unless absolute), FT_DEPENDS (modules to load
# first), FT_TEMPLATES (this folder) and CMAKE_INSTALL_PREFIX; sets FT_PREFIX and FT_<NAME> for the templates.
set(FT_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(pair ${FT_DIRS})
  string(REGEX MATCH "^([A-Z]+)=(.*)$" unused "${pair}")
  set(dir "${CMAKE_MATCH_2}")
  if(NOT IS_ABSOLUTE "${dir}")
    set(dir "${FT_PREFIX}/${dir}")
  endif()
  set(FT_${CMAKE_MATCH_1} "${dir}")
endforeach()
set(FT_LUA_DEPENDS "")
set(FT_TCL_DEPENDS "")
foreach(module ${FT_DEPENDS})
  string(APPEND FT_LUA_DEPENDS "depends_on(\"${module}\")\n")
  string(APPEND FT_TCL_DEPENDS "module load ${module}\n")
endforeach()
configure_file("${FT_TEMPLATES}/modulefile.lua.in" "${FT_OUT}/lmod/${FT_VERSION}.lua" @ONLY)
configure_file("${FT_TEMPLATES}/modulefile.tcl.in" "${FT_OUT}/tcl/${FT_VERSION}" @ONLY)
