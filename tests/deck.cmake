# The LAMMPS deck reader of halox-md (src/md/deck*.c, src/md/config.c) and
# its fuzz target. The tests compile the reader from source, so they need
# libhalox only (errors, hx_grid_parse), not the engine.
set(HX_DECK_SOURCES ${PROJECT_SOURCE_DIR}/src/md/deck.c ${PROJECT_SOURCE_DIR}/src/md/deck_lex.c
                     ${PROJECT_SOURCE_DIR}/src/md/deck_commands.c ${PROJECT_SOURCE_DIR}/src/md/deck_box.c
                     ${PROJECT_SOURCE_DIR}/src/md/deck_pair.c
                     ${PROJECT_SOURCE_DIR}/src/md/pair/pair_styles.c ${PROJECT_SOURCE_DIR}/src/md/config.c
                     ${PROJECT_SOURCE_DIR}/src/md/pair/pair_mix.c ${PROJECT_SOURCE_DIR}/src/md/types.c
                     ${PROJECT_SOURCE_DIR}/src/md/deck_fix.c ${PROJECT_SOURCE_DIR}/src/md/thermo.c
                     ${PROJECT_SOURCE_DIR}/src/md/deck_balance.c
                     ${PROJECT_SOURCE_DIR}/src/md/deck_velocity.c)
file(GLOB HX_DECK_CORPUS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/decks/*)

hx_test(test_deck SOURCES test_deck.c test_deck_errors.c ${HX_DECK_SOURCES}
        ARGS ${CMAKE_CURRENT_SOURCE_DIR}/decks LABELS cpu)
hx_test(test_deck_pair SOURCES test_deck_pair.c ${HX_DECK_SOURCES} LABELS cpu)

# The fuzz target without libFuzzer: the corpus, then seeded mutations.
hx_test(fuzz_deck_main SOURCES fuzz_deck_main.c fuzz_deck.c ${HX_DECK_SOURCES}
        ARGS 5000 20251129 ${HX_DECK_CORPUS} LABELS cpu)

if(HALOX_FUZZ)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(_fz -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
    add_executable(fuzz_deck fuzz_deck.c ${HX_DECK_SOURCES})
    target_include_directories(fuzz_deck PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_compile_options(fuzz_deck PRIVATE ${_fz} -fno-omit-frame-pointer -g
                           ${HALOX_C_WARNINGS})
    target_link_options(fuzz_deck PRIVATE ${_fz})
    target_link_libraries(fuzz_deck PRIVATE halox_internal m)

    # libFuzzer adds what it finds to the first folder: a build folder, so
    # that the sources keep only the seed decks.
    set(_work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_deck_corpus)
    file(MAKE_DIRECTORY ${_work})
    set(_dict ${CMAKE_CURRENT_BINARY_DIR}/fuzz_deck.dict)
    file(WRITE ${_dict} "# deck language for libFuzzer\n")
    foreach(tok units lj atom_style atomic lattice fcc region block create_box
                create_atoms box mass velocity all create loop geom dist gaussian mom rot
                pair_style lj/cut pair_coeff pair_modify shift neighbor bin neigh_modify
                every delay check yes no fix nve timestep thermo dump dump_modify sort id atom xyz run
                pre post local sum units lattice uniform
                variable index equal v_ "\${" "}" "$(" ")" "&\\x0A" "\\\"" "#" "^" "1e308")
      file(APPEND ${_dict} "\"${tok}\"\n")
    endforeach()
    add_test(NAME fuzz_deck_smoke
             COMMAND fuzz_deck -max_total_time=60 -runs=20000000 -max_len=4096 -timeout=10
                     -rss_limit_mb=2048 -dict=${_dict} -print_final_stats=1
                     ${_work} ${CMAKE_CURRENT_SOURCE_DIR}/decks)
    set_tests_properties(fuzz_deck_smoke PROPERTIES LABELS fuzz TIMEOUT 180
                         ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1")
  else()
    message(WARNING "HALOX_FUZZ=ON needs clang (CC=clang); fuzz_deck is not built. "
                    "fuzz_deck_main still runs the target on its corpus.")
  endif()
endif()
