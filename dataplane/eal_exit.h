/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of a DPDK process of this project: EAL cleaned up, nothing left on disk. */
#ifndef SDR_EAL_EXIT_H
#define SDR_EAL_EXIT_H

/**
 * rte_eal_cleanup() (given 10 s: a secondary process that died holding EAL's shared lock
 * would block it for good), then remove the EAL runtime directory
 * (/var/run/dpdk/<file prefix>: the shared configuration and the multi-process socket),
 * which DPDK 22.11 leaves behind. Secondary processes (dpdk-dumpcap) only use it while the
 * process runs. Parks EAL's interrupt thread first (sdr_eal_park_interrupts()). Call it
 * once, as the last thing before exit.
 */
void sdr_eal_exit(void);

/**
 * Keep EAL's interrupt thread in a callback of its own until the process exits, so that no
 * driver event handler (a memif peer hanging up) runs beside the closing of the ports and
 * rte_eal_cleanup(), which take no lock against them. Waits up to 10 s for the thread.
 * Call it after the lcores stopped and before the ports close (sdr_eal_exit() calls it
 * too; a second call does nothing); nothing that needs interrupts (link events, alarms)
 * works after it.
 */
void sdr_eal_park_interrupts(void);

/**
 * On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT: write the stack to stderr, then die of
 * the same signal (the exit status is unchanged). Call it once, early.
 */
void sdr_crash_report_init(void);

#endif /* SDR_EAL_EXIT_H */
