# Included (CMAKE_PROJECT_INCLUDE) by the scratch build of tools/mutants/mutate_changes.py only: every mutant
# recompiles one LibTorch translation unit alone, and LibTorch's headers are most of its time (about 10 s of
# 12), so there the library's files share one precompiled header. The project's own builds do not use it.
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _ft_mutant_precompiled_header)
function(_ft_mutant_precompiled_header)
  if(TARGET ft_torch)
    target_precompile_headers(ft_torch PRIVATE <ATen/ATen.h> <torch/nn.h> <torch/optim.h>)
  endif()
endfunction()
