/*
 * fields_bad.h - the bad-input half of test_fields (fields_bad.c).
 */
#ifndef HALOX_TESTS_FIELDS_BAD_H
#define HALOX_TESTS_FIELDS_BAD_H

#include "halox.h"

/* Every bad description and call of a halo field on a cpu transport, and
 * fields through `auto` (its choice carries them), in the box lo, len.
 * Collective. */
void fields_bad_input(hx_comm *comm, const double lo[3], const double len[3]);

/* A rank that stops before a field forward: its receivers end in
 * HX_ERR_TIMEOUT, never a hang. The communicator cannot be used for further
 * exchanges after it. Collective. */
void fields_stopped_peer(hx_comm *comm, const double lo[3], const double len[3]);

#endif /* HALOX_TESTS_FIELDS_BAD_H */
