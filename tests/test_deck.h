/*
 * test_deck.h - what the two files of test_deck share: the deck folder,
 * a small deck's head, and parsing a text as deck "t.in".
 */
#ifndef HALOX_TESTS_TEST_DECK_H
#define HALOX_TESTS_TEST_DECK_H

#include "hxtest.h"
#include "md/deck.h"

/* The folder of tests/decks (test_deck's argument). */
extern const char *deck_dir;

/* A deck's lines before the one a case puts at line 10. */
#define HEAD                                                                                       \
    "units lj\n"                                                                                   \
    "atom_style atomic\n"                                                                          \
    "lattice fcc 0.8442\n"                                                                         \
    "region box block 0 4 0 4 0 4\n"                                                               \
    "create_box 1 box\n"                                                                           \
    "create_atoms 1 box\n"                                                                         \
    "mass 1 1.0\n"                                                                                 \
    "pair_style lj/cut 2.5\n"                                                                      \
    "pair_coeff 1 1 1.0 1.0\n"

/* Parses text as deck "t.in" over the defaults. */
hx_status deck_parse_text(const char *text, hx_md_config *c, const char *const *vars, int nvars);
/* Rejected decks: each says file and line (test_deck_errors.c). */
void test_errors(void);

#endif /* HALOX_TESTS_TEST_DECK_H */
