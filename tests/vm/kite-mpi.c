// SPDX-License-Identifier: GPL-2.0
/*
 * MPI correctness checks between two guests (built on the host against
 * Debian's Open MPI by scripts/mkinitramfs.sh, installed as
 * /usr/bin/kite-mpi, started by mpirun with pml ucx: tests/vm/rdma-mpi.sh).
 * Each result is one line of the tests/vm format, printed by rank 0:
 *
 *   mpi-pingpong   every power-of-two size from 1 B to 4 MiB sent rank 0
 *                  -> rank 1 and back, each byte checked on both sides (the
 *                  reply carries a different pattern than the request)
 *   mpi-allreduce  MPI_Allreduce (sum) of 1M doubles whose sums are exact
 *                  in double precision, every element compared exactly
 *   mpi-alltoall   MPI_Alltoall of a block of ints per peer, each block
 *                  naming its sender, its receiver and its index
 *
 * and "info:" lines with the figures: the ping-pong's half round trip at
 * 8 B (latency) and its bandwidth at 1 MiB, from MPI_Wtime. The figures are
 * printed, never compared with anything. Exits 1 on any failed check.
 *
 *   kite-mpi [ITERS [FIG]]  ITERS checked round trips per size (default
 *                      10), FIG round trips for each figure (default 4 x ITERS)
 *   kite-mpi count     print how many results a run prints
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KM_RESULTS	3
#define KM_MAX_LOG	22		/* 4 MiB, the largest ping-pong size */
#define KM_LAT_SIZE	8		/* the latency figure's size */
#define KM_BW_SIZE	(1u << 20)	/* the bandwidth figure's size */
#define KM_RED_COUNT	(1u << 20)	/* doubles reduced */
#define KM_RED_PERIOD	4096u		/* element values repeat after this */
#define KM_A2A_COUNT	1024		/* ints per peer in the alltoall */
#define KM_TAG		7

/* The byte at OFF of message ITER of SIZE bytes; DIR 0 request, 1 reply. */
static unsigned char km_byte(unsigned long size, int iter, int dir,
			     unsigned long off)
{
	uint32_t x = (uint32_t)(off * 2654435761u) ^ (uint32_t)size * 40503u ^
		     (uint32_t)iter * 9973u ^ (dir ? 0xa5u : 0x3cu);

	return (unsigned char)(x ^ x >> 11 ^ x >> 23);
}

static void km_fill(unsigned char *buf, unsigned long size, int iter, int dir)
{
	unsigned long i;

	for (i = 0; i < size; i++)
		buf[i] = km_byte(size, iter, dir, i);
}

/* Index of the first wrong byte, or -1. */
static long km_check(const unsigned char *buf, unsigned long size, int iter,
		     int dir)
{
	unsigned long i;

	for (i = 0; i < size; i++)
		if (buf[i] != km_byte(size, iter, dir, i))
			return (long)i;
	return -1;
}

/* Report a result on rank 0: ok unless some rank counted an error. */
static int km_result(int rank, const char *name, long errs, const char *what)
{
	long all = 0;

	MPI_Allreduce(&errs, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		if (all)
			printf("FAIL %s: %ld errors (%s)\n", name, all, what);
		else
			printf("ok %s\n", name);
	}
	return all != 0;
}

/*
 * Every size, checked on both sides; returns this rank's error count (the
 * first bad message of each size is printed).
 */
static long km_pingpong(int rank, unsigned char *buf, int iters)
{
	unsigned long size;
	long errs = 0, bad;
	int it, log;

	for (log = 0; log <= KM_MAX_LOG; log++) {
		size = 1ul << log;
		for (it = 0; it < iters; it++) {
			if (rank == 0) {
				km_fill(buf, size, it, 0);
				MPI_Send(buf, (int)size, MPI_BYTE, 1, KM_TAG, MPI_COMM_WORLD);
				memset(buf, 0, size);
				MPI_Recv(buf, (int)size, MPI_BYTE, 1, KM_TAG, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad = km_check(buf, size, it, 1);
			} else {
				memset(buf, 0, size);
				MPI_Recv(buf, (int)size, MPI_BYTE, 0, KM_TAG, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad = km_check(buf, size, it, 0);
				km_fill(buf, size, it, 1);
				MPI_Send(buf, (int)size, MPI_BYTE, 0, KM_TAG, MPI_COMM_WORLD);
			}
			if (bad >= 0 && errs++ == 0)
				printf("# rank %d: size %lu message %d: byte %ld wrong\n",
				       rank, size, it, bad);
		}
	}
	return errs;
}

/* Seconds of N round trips of SIZE bytes (no checks: only the figures). */
static double km_time(int rank, unsigned char *buf, unsigned long size, int n)
{
	double t0;
	int i;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_BYTE, 1, KM_TAG, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, KM_TAG, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, KM_TAG, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_BYTE, 0, KM_TAG, MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - t0;
}

/*
 * Element J of rank R is (J mod period) / 4 + R: quarters of small integers,
 * so every partial sum is exact in double precision whatever order the
 * reduction adds them in. The sum over N ranks: N * (J mod period) / 4 +
 * N * (N - 1) / 2.
 */
static long km_allreduce(int rank, int nranks)
{
	double *in = malloc(KM_RED_COUNT * sizeof(*in));
	double *out = malloc(KM_RED_COUNT * sizeof(*out));
	long errs = 0;
	unsigned int j;
	double want;

	if (!in || !out) {
		printf("# rank %d: no memory for the allreduce\n", rank);
		free(in);
		free(out);
		return 1;
	}
	for (j = 0; j < KM_RED_COUNT; j++) {
		in[j] = (double)(j % KM_RED_PERIOD) / 4 + rank;
		out[j] = -1;
	}
	MPI_Allreduce(in, out, KM_RED_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (j = 0; j < KM_RED_COUNT; j++) {
		want = (double)nranks * (j % KM_RED_PERIOD) / 4 +
		       (double)nranks * (nranks - 1) / 2;
		if (out[j] != want && errs++ == 0)
			printf("# rank %d: allreduce element %u: %.17g, not %.17g\n",
			       rank, j, out[j], want);
	}
	free(in);
	free(out);
	return errs;
}

static int km_a2a_val(int from, int to, int k)
{
	return from * 1000003 + to * 1009 + k;
}

static long km_alltoall(int rank, int nranks)
{
	size_t n = (size_t)nranks * KM_A2A_COUNT;
	int *snd = malloc(n * sizeof(*snd)), *rcv = malloc(n * sizeof(*rcv));
	long errs = 0;
	int p, k;

	if (!snd || !rcv) {
		printf("# rank %d: no memory for the alltoall\n", rank);
		free(snd);
		free(rcv);
		return 1;
	}
	for (p = 0; p < nranks; p++)
		for (k = 0; k < KM_A2A_COUNT; k++) {
			snd[p * KM_A2A_COUNT + k] = km_a2a_val(rank, p, k);
			rcv[p * KM_A2A_COUNT + k] = -1;
		}
	MPI_Alltoall(snd, KM_A2A_COUNT, MPI_INT, rcv, KM_A2A_COUNT, MPI_INT,
		     MPI_COMM_WORLD);
	for (p = 0; p < nranks; p++)
		for (k = 0; k < KM_A2A_COUNT; k++)
			if (rcv[p * KM_A2A_COUNT + k] != km_a2a_val(p, rank, k) &&
			    errs++ == 0)
				printf("# rank %d: alltoall from %d, int %d: %d\n", rank,
				       p, k, rcv[p * KM_A2A_COUNT + k]);
	free(snd);
	free(rcv);
	return errs;
}

int main(int argc, char **argv)
{
	int rank, nranks, iters = 10, fig, failed = 0;
	unsigned char *buf;
	double t;

	if (argc > 1 && !strcmp(argv[1], "count")) {
		printf("%d\n", KM_RESULTS);
		return 0;
	}
	if (argc > 1)
		iters = atoi(argv[1]);
	fig = argc > 2 ? atoi(argv[2]) : 4 * iters;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2 || iters < 1 || fig < 1) {
		if (rank == 0)
			printf("FAIL mpi-setup: %d ranks, %d and %d iterations (want 2 ranks, >= 1)\n",
			       nranks, iters, fig);
		MPI_Finalize();
		return 1;
	}
	buf = malloc(1ul << KM_MAX_LOG);
	if (!buf) {
		printf("# rank %d: no memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	failed |= km_result(rank, "mpi-pingpong", km_pingpong(rank, buf, iters),
			    "1 B to 4 MiB, data checked both ways");
	t = km_time(rank, buf, KM_LAT_SIZE, fig);
	if (rank == 0)
		printf("info: mpi latency %u B: %.1f us (half round trip, %d round trips)\n",
		       KM_LAT_SIZE, t * 1e6 / fig / 2, fig);
	t = km_time(rank, buf, KM_BW_SIZE, fig);
	if (rank == 0)
		printf("info: mpi bandwidth %u B: %.1f MB/s (ping-pong, %d round trips)\n",
		       KM_BW_SIZE, 2.0 * KM_BW_SIZE * fig / t / 1e6, fig);
	failed |= km_result(rank, "mpi-allreduce", km_allreduce(rank, nranks),
			    "1M doubles, exact sums");
	failed |= km_result(rank, "mpi-alltoall", km_alltoall(rank, nranks),
			    "blocks naming sender, receiver, index");
	free(buf);
	fflush(stdout);
	MPI_Finalize();
	return failed;
}
