# Run after a GoogleTest binary is linked: one ctest test per test suite ("Suite.*", run through
# gtest_suite.sh) instead of one per test, so that a binary loading LibTorch starts 60 times, not 260.
# Script mode: -DBINARY=... -DOUTPUT=... -DRUNNER=... -DLABELS=... -DENVIRONMENT=... (";" escaped as "|").
execute_process(COMMAND ${BINARY} --gtest_list_tests OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BINARY} --gtest_list_tests failed (${status}): ${listing}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.")
    list(APPEND suites ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES suites)
string(REPLACE "|" ";" environment "${ENVIRONMENT}")
set(text "# Generated from ${BINARY} --gtest_list_tests by gtest_suites.cmake: one test per suite.\n")
foreach(suite IN LISTS suites)
  string(APPEND text "add_test([=[${suite}.*]=] bash [=[${RUNNER}]=] [=[${BINARY}]=] [=[${suite}.*]=])\n"
                     "set_tests_properties([=[${suite}.*]=] PROPERTIES LABELS [=[${LABELS}]=] SKIP_RETURN_CODE 77 "
                     "ENVIRONMENT [=[${environment}]=])\n")
endforeach()
file(WRITE ${OUTPUT} "${text}")
