# The docs against the sources: docs/environment.md's tables are what
# halox-md --help-env prints (src/core/knobs.def), and the sources name no
# HALOX_* variable those tables (or the doc's list of variables scripts
# read) leave out; every relative link of README.md and docs/*.md, and
# every docs/ file the tree names, resolves; and those pages (but the
# dated history) name no HALOX_* variable that is not in the tables, nor a
# removed one as if it were current.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET halox-md)
  add_test(NAME test_env_documented
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/env_documented.py
                   ${PROJECT_SOURCE_DIR} --halox $<TARGET_FILE:halox-md>)
  set_tests_properties(test_env_documented PROPERTIES LABELS cpu TIMEOUT 60)
  hx_test_mpi_env(test_env_documented CPU)
  # cmake --build build --target env-doc: the tables written into the doc.
  add_custom_target(env-doc
                    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/env_documented.py
                            ${PROJECT_SOURCE_DIR} --halox $<TARGET_FILE:halox-md> --update
                    DEPENDS halox-md VERBATIM)
endif()
if(Python3_Interpreter_FOUND)
  add_test(NAME test_doc_links
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/doc_links.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_doc_links PROPERTIES LABELS cpu TIMEOUT 60)
endif()
