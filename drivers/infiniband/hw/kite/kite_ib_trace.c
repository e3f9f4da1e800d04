// SPDX-License-Identifier: GPL-2.0
/*
 * Kite RDMA driver: the one place its tracepoints are instantiated.
 *
 * Copyright (c) 2026 The Kite authors
 */
#define CREATE_TRACE_POINTS
#include "kite_ib_trace.h"
