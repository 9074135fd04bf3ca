/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of a DPDK process of this project: EAL cleaned up, nothing left on disk. */
#ifndef SDR_EAL_EXIT_H
#define SDR_EAL_EXIT_H

/**
 * rte_eal_cleanup() (given 10 s: a secondary process that died holding EAL's shared lock
 * would block it for good), then remove the EAL runtime directory
 * (/var/run/dpdk/<file prefix>: the shared configuration and the multi-process socket),
 * which DPDK 22.11 leaves behind. Secondary processes (dpdk-dumpcap) only use it while the
 * process runs. Call it once, as the last thing before exit.
 */
void sdr_eal_exit(void);

#endif /* SDR_EAL_EXIT_H */
