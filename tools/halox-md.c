/*
 * halox-md - the Lennard-Jones MD program of halox (see src/md/run.c).
 */
#include "md/md.h"

int main(int argc, char **argv)
{
    return hx_md_main(argc, argv);
}
