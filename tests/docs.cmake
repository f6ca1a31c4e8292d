# The docs against the sources: every HALOX_* variable the sources read has
# its row in docs/environment.md, and no row names a variable nothing reads;
# every relative link of README.md and docs/*.md, and every docs/ file the
# tree names, resolves.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_env_documented
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/env_documented.py
                   ${PROJECT_SOURCE_DIR})
  add_test(NAME test_doc_links
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/doc_links.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_env_documented test_doc_links PROPERTIES LABELS cpu TIMEOUT 60)
endif()
