/*
 * balance.h - LAMMPS's `balance` and `fix balance` on halox-md's home
 * atoms (balance.c): the imbalance of atoms per rank, new cuts of the
 * decomposition (libhalox's hx_balance_shift, or the deck's own), and
 * LAMMPS's report. Not installed.
 */
#ifndef HALOX_MD_BALANCE_H
#define HALOX_MD_BALANCE_H

#include "md/md.h"

/* The deck's `balance` before the run (collective): measures the
 * imbalance of atoms per rank; at or above THRESH sets the new cuts in
 * sys->decomp, migrates the home atoms (with their velocities, ids, types
 * and restart reference positions) and prints LAMMPS's report on rank 0. */
hx_status hxi_md_balance_setup(hx_comm *comm, const hx_md_balance *b, hx_md_system *sys);

/* fix balance at a rebalancing step (collective): the home atoms' positions
 * in sys->x (inside the box: hxi_md_balance_wrap); at or above THRESH,
 * new cuts in sys->decomp (*changed 1). The caller migrates and plans. */
hx_status hxi_md_balance_fix(hx_comm *comm, const hx_md_balance *b, hx_md_system *sys,
                             int *changed);

/* How the home atoms are counted (the one thing an engine gives): slabs
 * of cuts (fractions, n + 1 of them) along dim of d into counts[0 .. n),
 * and atoms per owner under d into count[rank] (added to, zeroed by the
 * caller), each over this rank's n home atoms only, inside the box as
 * LAMMPS's Domain::pbc puts them; balance.c sums them over the ranks.
 * Rank-local. */
typedef struct hxi_md_bal_count {
    int n;
    hx_status (*slabs)(void *arg, const hx_decomp *d, int dim, const double *cuts, int n,
                       double *counts);
    hx_status (*owners)(void *arg, const hx_decomp *d, double *count);
    void *arg;
} hxi_md_bal_count;

/* hxi_md_balance_fix with the engine's count c and its decomposition d
 * (collective): at or above THRESH, new cuts in *d (*changed 1). */
hx_status hxi_md_balance_fix_with(hx_comm *comm, const hx_md_balance *b, hx_decomp *d,
                                  const hxi_md_bal_count *c, int *changed);

/* Domain::pbc for an orthorhombic box (a triclinic one is the engine's
 * remap): every atom of x inside the box, so that it is counted where
 * LAMMPS counts it. */
void hxi_md_balance_wrap(const hx_decomp *d, double *x, int n);

/* fix balance rebalances at this absolute step (a multiple of NFREQ, as
 * LAMMPS's FixBalance forces a reneighbouring there). */
int hxi_md_balance_due(const hx_md_balance *b, int64_t step);

/* LAMMPS's thermo_style one adds a Volume column where a fix may change
 * the domains (fix balance): the same in c's columns, if they are
 * thermo_style one's. */
void hxi_md_balance_thermo(hx_md_config *c);

#endif /* HALOX_MD_BALANCE_H */
