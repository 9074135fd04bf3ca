/* SPDX-License-Identifier: BSD-3-Clause */
/* The configuration file's keys (config_keys.h). */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_keys.h"

static const struct dp_key dataplane_keys[DPK_DATAPLANE_COUNT] = {
	[DPK_DATAPLANE_NAME] = {
		.name = "name", .kind = DP_K_OTHER,
		.value = "NAME",
		.dflt = "`sdr0`",
		.doc = "instance name: the status segment `/dev/shm/sdr-NAME` and the sockets "
		       "`NAME.admin` and `NAME.sdk` in the control directory, which `sdrctl` "
		       "and SDK applications attach to. `--name` overrides it. A second "
		       "dataplane of the same name is refused while the first runs.",
	},
	[DPK_DATAPLANE_MBUFS] = {
		.name = "mbufs", .kind = DP_K_INT, .lo = 1024, .hi = 1u << 24,
		.value = "integer, 1024 … 16777216",
		.dflt = "16384",
		.doc = "packet buffers in the pool shared by every port (each holds a "
		       "4352-byte frame; about 4.6 KB with its headers). With `mode = "
		       "engines` they are split evenly into one pool per engine, at least "
		       "1024 each: an engine's RX queues (but an AF_XDP port's), frames and "
		       "emulated links take from its own, so one that runs short leaves the "
		       "others theirs. A pool's RX rings (1024 descriptors each, which a NIC "
		       "fills at start) take at most half of it: fewer descriptors where it is "
		       "small. See "
		       "[sizing](deployment.md#memory).",
	},
	[DPK_DATAPLANE_ZC_MBUFS] = {
		.name = "zc_mbufs", .kind = DP_K_INT, .lo = 1024, .hi = 1u << 25,
		.value = "integer, 1024 … 33554432",
		.dflt = "twice `mbufs`",
		.doc = "small buffers for zero-copy send (`[port] zero_copy`), about 320 bytes "
		       "each: a data frame in flight takes two, one attached to the "
		       "application's bytes and one for its pad and ICRC. Split per engine as "
		       "`mbufs` (at least 1024 each). A frame that finds none free goes out as "
		       "a copy (`tx_zero_copy_fallback_copies`). Made only where a port sends "
		       "zero-copy, from the memory left after `mbufs`.",
	},
	[DPK_DATAPLANE_BURST] = {
		.name = "burst", .kind = DP_K_INT, .lo = 1, .hi = 256,
		.value = "integer, 1 … 256",
		.dflt = "32",
		.doc = "packets per receive, transmit and packetizer call",
	},
	[DPK_DATAPLANE_IDLE_SLEEP_US] = {
		.name = "idle_sleep_us", .kind = DP_K_INT, .lo = 0, .hi = 1000000,
		.value = "integer, 0 … 1000000",
		.dflt = "50",
		.doc = "µs a poll loop sleeps after a round that found nothing to do; 0 polls "
		       "without pause (dedicated cores). `--busy-poll` sets 0.",
	},
	[DPK_DATAPLANE_ARENA] = {
		.name = "arena", .kind = DP_K_SIZE, .lo = 16ull << 20, .hi = 64ull << 30,
		.value = "size, 16 MiB … 64 GiB",
		.dflt = "1 GiB",
		.doc = "buffers of SDK applications, divided among the 16 application slots: "
		       "each attached application gets a sixteenth in its own segment, from "
		       "which it takes the buffers it sends from and receives into",
	},
	[DPK_DATAPLANE_CONN_MEMORY] = {
		.name = "conn_memory", .kind = DP_K_SIZE, .lo = 16ull << 20, .hi = 1ull << 40,
		.value = "size, 16 MiB … 1 TiB",
		.dflt = "1 GiB",
		.doc = "the most buffers one connection's endpoint may take: the bitmaps of its "
		       "messages in flight and, with a code, its parity buffers, which grow with "
		       "`max_msg`, `inflight`, `chunk` and the scheme's m, its FEC jobs' staging "
		       "(`[pipeline] fec = lcore`) and its codes' decode tables, which grow with "
		       "k x m. A connection that "
		       "would need more (from the file, `sdrctl conn add/set` or an application's "
		       "create or set) is refused with what it would need",
	},
	[DPK_DATAPLANE_USER_MEMORY] = {
		.name = "user_memory", .kind = DP_K_SIZE, .lo = 16ull << 20, .hi = 1ull << 40,
		.value = "size, 16 MiB … 1 TiB",
		.dflt = "4 GiB",
		.doc = "the most buffers (as `conn_memory` counts them) the connections of one "
		       "user's applications may take together: those they created and those they "
		       "have open. An application's create or set that would take them past it "
		       "is refused with what they would need. The dataplane's own user is not "
		       "limited",
	},
	[DPK_DATAPLANE_CONTROL_DIR] = {
		.name = "control_dir", .kind = DP_K_OTHER,
		.value = "absolute path, up to 63 characters",
		.dflt = "`/run/sdr`",
		.doc = "where the control sockets go (created if missing). A dataplane not run "
		       "as root that keeps the default uses `$XDG_RUNTIME_DIR/sdr`, or "
		       "`/tmp/sdr-UID`",
	},
	[DPK_DATAPLANE_CONTROL_GROUP] = {
		.name = "control_group", .kind = DP_K_OTHER,
		.value = "a group name",
		.dflt = "none",
		.doc = "the group whose members may run SDK applications: the SDK socket "
		       "becomes mode 0660 and the status segment 0640 for this group. Without "
		       "it both are 0600: only the dataplane's user. The admin socket "
		       "(sdrctl's changes) stays 0600 either way. See "
		       "[sdk.md](sdk.md#the-trust-model)",
	},
	[DPK_DATAPLANE_SLOTS_PER_USER] = {
		.name = "sdk_slots_per_user", .kind = DP_K_INT, .lo = 1, .hi = 16,
		.value = "integer, 1 … 16",
		.dflt = "4",
		.doc = "of the 16 application slots, how many the applications of one user "
		       "(one UID, as the kernel names the peer of the SDK socket) hold at once; "
		       "one more is refused with a one-line reason, so that one member of "
		       "`control_group` cannot take every slot. The dataplane's own user is "
		       "not limited",
	},
	[DPK_DATAPLANE_STATS_PERIOD] = {
		.name = "stats_period", .kind = DP_K_TIME,
		.value = "time",
		.dflt = "0 (off)",
		.doc = "print a stats line this often; `--stats-period` overrides it",
	},
};

const struct dp_key_section dp_dataplane_keys = { "dataplane", "[dataplane]", DPK_DATAPLANE_COUNT, dataplane_keys };

static const struct dp_key pipeline_keys[DPK_PIPELINE_COUNT] = {
	[DPK_PIPELINE_MODE] = {
		.name = "mode", .kind = DP_K_OTHER,
		.value = "`rtc`, `split` or `engines`",
		.dflt = "`rtc`",
		.doc = "`rtc`: every stage on one lcore (run to completion). `engines`: "
		       "`engines` engine lcores, each owning its connections end to end (see "
		       "`engines`). `split`: receive, parse and ICRC check on `rx_lcores` "
		       "receive workers (the lcores after the main one); delivery, "
		       "reliability, packetizer, link emulator and transmit on the main lcore; "
		       "each worker hands its parsed packets over through its own SP/SC ring. "
		       "`split` needs 1 + `rx_lcores` lcores (`-l 0-1` for one worker).",
	},
	[DPK_PIPELINE_ENGINES] = {
		.name = "engines", .kind = DP_K_INT, .lo = 1, .hi = DP_MAX_ENGINES,
		.value = "integer, 1 … 8",
		.dflt = "1",
		.doc = "with `mode = engines`: engine lcores. Engine e runs on the e-th lcore "
		       "(engine 0 on the main lcore, between its ticks), receives on RX queue "
		       "e and sends on TX queue e of every port, and owns its connections end "
		       "to end: their message tables, bitmaps, timers, reliability state and "
		       "erasure coding (inline), and its own copy of each port's link emulator "
		       "(the emulator's `rate` then applies per engine). Nothing is handed "
		       "from one lcore to another per packet. A connection goes to the engine "
		       "its `engine` key names, or else to one that both ends compute alike "
		       "from its pair of QPNs (a hash: pin connections with `engine` to "
		       "balance them). Steering is queue-per-queue by default: TX queue e of "
		       "one side must be RX queue e of the other, as on a `ring:` pair or a "
		       "memif pair; on a NIC, `[port] steering = rss` makes the peer's RSS do "
		       "it. Either way the peer must place the connection on the same engine; "
		       "a packet that arrives on another engine's queue is dropped "
		       "(`wrong_engine_queue`). Needs `engines` lcores (`-l 0-1` for two; "
		       "fewer: one line, exit 2) and at least `engines` `rx_queues` and "
		       "`tx_queues` on every port (checked with the file). A connection added, "
		       "changed or deleted at run time (`sdrctl conn add/set/del`) is put in "
		       "place or taken out by its engine's own lcore while the other engines "
		       "go on; a running connection cannot move to another engine. `link set` "
		       "changes every engine's copy of the emulator. SDK applications reach "
		       "the connections of every engine: each engine serves its own queue pair "
		       "of every client, for the connections it owns (a client's segment has "
		       "one queue pair per engine, and the library posts each request on its "
		       "connection's), so an application's connections spread over the engines "
		       "like any others; engine 0 also runs the control service's jobs. A "
		       "port's `exception` works per engine: engine e hands what is not RoCEv2 "
		       "from its RX queue of the port to its TX queue of the exception port "
		       "(which then needs `engines` queues too). Not yet with `fec = lcore` (a "
		       "`capture` file is shared by the engines, one frame at a time: a "
		       "debugging aid, not for speed). `pipeline show` has a row per engine, "
		       "the `--json` summary an `engines` list and `goodput_all_gbps`, "
		       "telemetry `/sdr/stages,E`. `make bench-scaling` measures goodput "
		       "against engines.",
	},
	[DPK_PIPELINE_RX_LCORES] = {
		.name = "rx_lcores", .kind = DP_K_INT, .lo = 1, .hi = DP_MAX_RX_LCORES,
		.value = "integer, 1 … 8",
		.dflt = "1",
		.doc = "with `mode = split`: receive workers. Worker k polls RX queues k, k + "
		       "`rx_lcores`, k + 2·`rx_lcores`, … of every port, so give the ports at "
		       "least `rx_lcores` `rx_queues`; a port with fewer queues (a TAP "
		       "exception port) is polled by the first workers only. A channel's "
		       "packets come in on one queue (RSS hashes the UDP source port, which "
		       "carries the QPN), so a connection needs at least as many `channels` as "
		       "workers to use them all. `pipeline show` has a row per worker (its "
		       "lcore, packets, cycles per packet of rx + parse), the `--json` summary "
		       "an `rx_workers` list. The bitmaps and the reliability layer stay on "
		       "the main lcore; see `placement` for the payload copy. Several workers "
		       "cannot share a port's `capture` file (use `dpdk-dumpcap`).",
	},
	[DPK_PIPELINE_PLACEMENT] = {
		.name = "placement", .kind = DP_K_OTHER,
		.value = "`main` or `workers`",
		.dflt = "`workers` with `mode = split`, else `main`",
		.doc = "where the payload of a received data packet is copied into the receive "
		       "buffer. `main`: on the main lcore, with the checks and the bitmaps. "
		       "`workers`: the main lcore checks the packet and claims it (its packet "
		       "bit is set, so duplicates are dropped), the receive worker that "
		       "received it makes the copy (the `payload_copy` row of `pipeline "
		       "show`), and the main lcore counts it in its chunk once the copy is "
		       "made; a receive completes only after every copy into it. This takes "
		       "the copy, about 60 % of the main lcore's receive cost, off it. A frame "
		       "in several mbufs goes to the worker too when its payload lies in one "
		       "of them (a zero-copy sender's chain, `rx_multiseg_in_place`); one "
		       "that had to be copied whole to be parsed (`rx_multiseg_copied`) is "
		       "placed on the main lcore. `workers` "
		       "needs `mode = split`.",
	},
	[DPK_PIPELINE_FEC] = {
		.name = "fec", .kind = DP_K_OTHER,
		.value = "`inline` or `lcore`",
		.dflt = "`inline`",
		.doc = "where erasure coding runs. `inline`: in the poll loop, inside the "
		       "packetizer's turn. `lcore`: on a FEC worker lcore fed through two "
		       "rings (`sdr_fec_in`, `sdr_fec_out`): the poll loop hands each encode "
		       "and decode out as a job and goes on injecting and receiving; results "
		       "come back a few microseconds later (`pipeline show`: the `fec_worker` "
		       "row counts jobs and their cycles). With `mode = rtc` and two lcores "
		       "the worker runs on the main lcore, which otherwise only ticks; with "
		       "`mode = split`, or rtc on one lcore, it needs one more lcore (`-l "
		       "0-2`, or `--lcores '0@0,1@1,2@0'` to share CPUs). Use it when decodes "
		       "are large (k × chunk of hundreds of KiB) or the connection rate is "
		       "high enough that a decode would delay injection.",
	},
	[DPK_PIPELINE_FEC_JOBS] = {
		.name = "fec_jobs", .kind = DP_K_INT, .lo = 1, .hi = DP_MAX_FEC_JOBS,
		.value = "integer, 1 … 64",
		.dflt = "8",
		.doc = "with `fec = lcore`: encodes and decodes one connection may have out at "
		       "a time; more wait in order (`fec_job_waits`)",
	},
};

const struct dp_key_section dp_pipeline_keys = { "pipeline", "[pipeline]", DPK_PIPELINE_COUNT, pipeline_keys };

static const struct dp_key port_keys[DPK_PORT_COUNT] = {
	[DPK_PORT_DEVICE] = {
		.name = "device", .kind = DP_K_OTHER,
		.value = "text, 1 … 255 characters",
		.dflt = "— (required)",
		.doc = "which port: see [device kinds](#device-kinds) below. Two ports cannot "
		       "have the same `device`.",
	},
	[DPK_PORT_MAC] = {
		.name = "mac", .kind = DP_K_OTHER,
		.value = "MAC",
		.dflt = "the device's",
		.doc = "the source MAC of the frames the dataplane builds",
	},
	[DPK_PORT_IPV4] = {
		.name = "ipv4", .kind = DP_K_OTHER,
		.value = "IPv4 address",
		.dflt = "none",
		.doc = "the source address of connections whose `peer_ip` is IPv4",
	},
	[DPK_PORT_IPV6] = {
		.name = "ipv6", .kind = DP_K_OTHER,
		.value = "IPv6 address",
		.dflt = "none",
		.doc = "the source address of connections whose `peer_ip` is IPv6",
	},
	[DPK_PORT_MTU] = {
		.name = "mtu", .kind = DP_K_INT, .lo = 576, .hi = 9600,
		.value = "integer, 576 … 9600",
		.dflt = "4200",
		.doc = "the L3 MTU the dataplane asks the device for at start. A TAP port "
		       "(DPDK 22.11 `net_tap`) carries at most 1504-byte packets: the "
		       "dataplane says so at start and refuses a connection on it whose "
		       "packets would not fit (its `mtu` must be 1024 or less). A 4096-byte "
		       "RoCE payload makes a 4160-byte IPv4 packet (4180 over IPv6). A device "
		       "that cannot take it keeps its own (AF_PACKET accepts at most 1500 "
		       "through DPDK, and ethdev logs `Frame size ... > device max frame "
		       "size`): set the interface MTU with `ip link` then.",
	},
	[DPK_PORT_RX_QUEUES] = {
		.name = "rx_queues", .kind = DP_K_INT, .lo = 1, .hi = DP_MAX_QUEUES,
		.value = "integer, 1 … 64",
		.dflt = "1",
		.doc = "receive queues, spread over the receive workers (`[pipeline] "
		       "rx_lcores`). With more than one, RSS hashes on UDP (the source port "
		       "carries the QPN), which spreads a connection's channels over the "
		       "queues.",
	},
	[DPK_PORT_TX_QUEUES] = {
		.name = "tx_queues", .kind = DP_K_INT, .lo = 1, .hi = DP_MAX_QUEUES,
		.value = "integer, 1 … 64",
		.dflt = "1",
		.doc = "transmit queues. A frame goes out on queue (UDP source port mod "
		       "`tx_queues`): each channel keeps one queue, in order. Between two "
		       "`ring:` ports TX queue q of one side is RX queue q of the other, so "
		       "`tx_queues` of one must equal `rx_queues` of its peer (checked at "
		       "start).",
	},
	[DPK_PORT_LINK] = {
		.name = "link", .kind = DP_K_OTHER,
		.value = "NAME of a `[link]`",
		.dflt = "none",
		.doc = "put this link emulator on the port's egress",
	},
	[DPK_PORT_EXCEPTION] = {
		.name = "exception", .kind = DP_K_OTHER,
		.value = "NAME of another `[port]`",
		.dflt = "none (drop)",
		.doc = "where frames that are not RoCEv2 (not IP, not UDP, another UDP port, "
		       "IP fragments) go, instead of being dropped: the kernel through a TAP "
		       "port (`tap.ini`), or the host through a representor (`bluefield3.ini`)",
	},
	[DPK_PORT_CAPTURE] = {
		.name = "capture", .kind = DP_K_OTHER,
		.value = "path, up to 255 characters",
		.dflt = "none",
		.doc = "write every frame in and out of the port to this pcap file (slow; for "
		       "debugging)",
	},
	[DPK_PORT_ALLOW] = {
		.name = "allow", .kind = DP_K_OTHER,
		.value = "comma-separated IPv4/IPv6 addresses or prefixes (`10.1.0.0/24, "
			 "fd00::/64`), up to 16",
		.dflt = "none (any source)",
		.doc = "RoCEv2 packets from any other source address are dropped before the "
		       "QPN lookup (`source_not_allowed`)",
	},
	[DPK_PORT_STEERING] = {
		.name = "steering", .kind = DP_K_OTHER,
		.value = "`queue` or `rss`",
		.dflt = "`queue`",
		.doc = "how each packet reaches the engine that owns its connection "
		       "(`[pipeline] mode = engines`). `queue`: TX queue e of one side is RX "
		       "queue e of the other (`ring:`, memif). `rss`: the port's RSS is set to "
		       "the dataplane's key and a redirection table whose entry i is queue i "
		       "mod `engines`, and this side's connections send every frame with a UDP "
		       "source port whose Toeplitz hash puts it on the queue of the engine "
		       "that owns the connection at the far end (which must be configured "
		       "alike: same `engines`, `steering = rss`). Needs `mode = engines` and "
		       "1, 2, 4 or 8 engines. "
		       "A device with no UDP RSS keeps its queues one for one and says so at "
		       "start. On a NIC (a PCI address, an mlx5 representor or sub-function) "
		       "that carries connections, several engines need `rss`: `queue` is "
		       "refused there. See [deployment.md](deployment.md#engines).",
	},
	[DPK_PORT_ZERO_COPY] = {
		.name = "zero_copy", .kind = DP_K_OTHER,
		.value = "`yes` or `no`",
		.dflt = "`yes` on the virtual devices that copy in software (memif, "
			"AF_PACKET, AF_XDP, pcap, TAP, null), `no` on `ring:` ports, PCI "
			"devices, other drivers (bonding, failsafe, vhost) and memif with its "
			"own `zero-copy=yes`",
		.doc = "data frames leave as a chain of three mbufs — headers, the "
		       "application's own bytes (an mbuf attached to its buffer), pad and ICRC "
		       "— instead of carrying a copy of the payload; a send completes only "
		       "once no frame still points into its buffer "
		       "([architecture.md](architecture.md#send-side)). A device that cannot "
		       "send multi-segment frames copies, and says so at start. Off by default "
		       "on a `ring:` port, whose peer shares the process and its caches: there "
		       "the copy costs what the chain saves (the receiver parses the chain "
		       "where it lies, `rx_multiseg_in_place`); on a PCI NIC, which reads the "
		       "application's buffers by DMA once they are mapped for it (`dma_map`, "
		       "[deployment.md](deployment.md#memory)): `yes` there is for a NIC "
		       "tested with it; on memif with `zero-copy=yes`, "
		       "which sends only buffers of its own mempool (`yes` there is refused). "
		       "`pipeline show` says how each port sends.",
	},
	[DPK_PORT_DMA_MAP] = {
		.name = "dma_map", .kind = DP_K_OTHER,
		.value = "`auto` or `yes`",
		.dflt = "`auto`",
		.doc = "with `zero_copy` on, which buffers the device reads by DMA are "
		       "registered with DPDK (`rte_extmem_register()`) and mapped for it "
		       "(`rte_dev_dma_map()`; mlx5 makes its memory region of them): every "
		       "SDK application's buffers as it attaches, and `--traffic`'s, before "
		       "any frame points into them; unmapped once none does. `auto`: on a "
		       "device on a hardware bus (a PCI NIC, an mlx5 representor or "
		       "sub-function), whose DMA needs it. `yes`: on a virtual device too, "
		       "which has nothing to map: a check of the registration before a NIC. "
		       "A device that refuses a mapping sends by copy from then on, and says "
		       "so once; a NIC whose driver is not mlx5 needs EAL's IOVA mode VA "
		       "(`--iova-mode=va`) and copies otherwise. `pipeline show` counts what "
		       "is mapped.",
	},
};

const struct dp_key_section dp_port_keys = { "port", "[port NAME]", DPK_PORT_COUNT, port_keys };

static const struct dp_key link_keys[DPK_LINK_COUNT] = {
	[DPK_LINK_DELAY] = {
		.name = "delay", .kind = DP_K_OTHER,
		.value = "time, 0 … 10 s",
		.dflt = "0",
		.doc = "one-way delay after serialization",
	},
	[DPK_LINK_RATE] = {
		.name = "rate", .kind = DP_K_OTHER,
		.value = "rate, 1 Kbit/s … 100 Tbit/s, or `0` / `unlimited`",
		.dflt = "unlimited",
		.doc = "bottleneck rate (with `mode = engines`, of each engine's copy of the link)",
	},
	[DPK_LINK_QUEUE] = {
		.name = "queue", .kind = DP_K_OTHER,
		.value = "time, 0 … 10 s",
		.dflt = "0 (no limit but the mbuf pool)",
		.doc = "the bottleneck's buffer, as time at its `rate`: a frame that would wait "
		       "longer for the link is dropped (`dropped_queue_full`), as a router with "
		       "that much buffer drops it. Without it a sender faster than `rate` queues "
		       "as much as the pool holds (65536 frames of 4 KiB at 10 Gbit/s: 0.2 s), "
		       "and the round trip grows by as much; no effect without a `rate`",
	},
	[DPK_LINK_OVERHEAD] = {
		.name = "overhead", .kind = DP_K_OTHER,
		.value = "bytes, 0 … 4096",
		.dflt = "24",
		.doc = "wire bytes per packet counted by the rate besides the frame",
	},
	[DPK_LINK_LOSS] = {
		.name = "loss", .kind = DP_K_OTHER,
		.value = "probability",
		.dflt = "0",
		.doc = "i.i.d. loss per packet (turns `burst` off)",
	},
	[DPK_LINK_BURST] = {
		.name = "burst", .kind = DP_K_OTHER,
		.value = "`PGB,PBG[,LG,LB]` probabilities, or `off`",
		.dflt = "off",
		.doc = "Gilbert-Elliott loss instead of `loss`",
	},
	[DPK_LINK_REORDER] = {
		.name = "reorder", .kind = DP_K_OTHER,
		.value = "`P[,TIME]` (TIME 0 … 10 s), or `off`",
		.dflt = "0, 0",
		.doc = "probability of an extra delay uniform in [0, TIME]",
	},
	[DPK_LINK_DUP] = {
		.name = "dup", .kind = DP_K_OTHER,
		.value = "probability",
		.dflt = "0",
		.doc = "probability a packet is delivered twice",
	},
	[DPK_LINK_CORRUPT] = {
		.name = "corrupt", .kind = DP_K_OTHER,
		.value = "probability",
		.dflt = "0",
		.doc = "probability a copy gets one bit flipped",
	},
	[DPK_LINK_SEED] = {
		.name = "seed", .kind = DP_K_OTHER,
		.value = "integer (64-bit)",
		.dflt = "1",
		.doc = "seeds every random choice",
	},
	[DPK_LINK_PATHS] = {
		.name = "paths", .kind = DP_K_INT, .lo = 1, .hi = LINK_EMU_MAX_PATHS,
		.value = "1 … 8",
		.dflt = "1",
		.doc = "parallel paths, as fibre routes between two datacenters: each frame "
		       "takes the path the hash of its UDP source port names, as an ECMP "
		       "router's would ([link-emulator.md](link-emulator.md#several-paths))",
	},
	[DPK_LINK_PATHK] = {
		.name = "path1 … path8", .kind = DP_K_OTHER,
		.value = "emulator words (`delay 20ms rate 1G loss 1e-4`)",
		.dflt = "none",
		.doc = "what path K does besides the section's own keys (which every path "
		       "starts from)",
	},
};

const struct dp_key_section dp_link_keys = { "link", "[link NAME]", DPK_LINK_COUNT, link_keys };

static const struct dp_key conn_keys[DPK_CONN_COUNT] = {
	[DPK_CONN_PORT] = {
		.admin = 1,
		.name = "port", .kind = DP_K_OTHER,
		.value = "NAME of a `[port]`",
		.dflt = "— (required)",
		.doc = "the port the connection uses",
	},
	[DPK_CONN_ENGINE] = {
		.admin = 1,
		.name = "engine", .kind = DP_K_INT, .lo = 0, .hi = DP_MAX_ENGINES - 1,
		.value = "integer, 0 … 7",
		.dflt = "from the QPNs",
		.doc = "with `[pipeline] mode = engines`: the engine that owns the connection "
		       "(less than `engines`; the peer's end must be on the engine of the same "
		       "number)",
	},
	[DPK_CONN_STRIPES] = {
		.name = "stripes", .kind = DP_K_INT, .lo = 1, .hi = DP_MAX_ENGINES,
		.value = "integer, 1 … 8",
		.dflt = "1",
		.doc = "message-level striping: the connection's messages go round-robin over "
		       "this many stripes (message n on stripe n mod `stripes`), each a "
		       "connection of its own with its own QPN range, message table, bitmaps, "
		       "timers and FEC, owned by its own engine: stripe 0 is this section, "
		       "with its QPNs and engine; stripe s is shown as `NAME/s`, takes the "
		       "QPNs s × (`channels` × `generations` + 1) further on both sides and "
		       "runs on the engine s after stripe 0's (modulo `engines`). So one "
		       "connection uses every engine and no bitmap is shared between lcores. "
		       "Both ends set the same `stripes`. The connection's `rate` is shared: "
		       "each stripe is paced at `rate` / `stripes`. `--traffic` gives stripe s "
		       "every message n with n mod `stripes` = s (count and inflight are the "
		       "connection's, shared out alike; a stripe has one in flight at least) "
		       "and the summary reports the connection as one; `sdrctl "
		       "conn show` and the `conns` of the summary have a row per stripe. Not "
		       "with `remote_ctrl_qpn` (a verbs peer's QPNs are not consecutive "
		       "ranges). A striped connection comes from the file: `conn add`/`conn "
		       "set` with `stripes` is refused and `conn del NAME` deletes every "
		       "stripe. An SDK application opens it by its name and `libsdr` stripes "
		       "its messages the same way (see [sdk.md](sdk.md)); a stripe alone "
		       "(`NAME/1`) cannot be opened. Works in every `mode` (with one lcore the "
		       "stripes share it).",
	},
	[DPK_CONN_PEER_IP] = {
		.admin = 1,
		.name = "peer_ip", .kind = DP_K_OTHER,
		.value = "IPv4 or IPv6 address",
		.dflt = "— (required)",
		.doc = "the peer's address; the port needs an address of the same family "
		       "(`ipv4` or `ipv6`), checked at start",
	},
	[DPK_CONN_PEER_MAC] = {
		.admin = 1,
		.name = "peer_mac", .kind = DP_K_OTHER,
		.value = "MAC",
		.dflt = "`ff:ff:ff:ff:ff:ff`",
		.doc = "the destination MAC of every frame (there is no ARP): the peer's or "
		       "the next hop's",
	},
	[DPK_CONN_LOCAL_QPN] = {
		.admin = 1,
		.name = "local_qpn", .kind = DP_K_INT, .lo = 1, .hi = 0xFFFFFF,
		.value = "integer, 1 … 0xFFFFFF",
		.dflt = "0x100",
		.doc = "first of our QPNs: `channels × generations` data QPNs, then the "
		       "control QPN",
	},
	[DPK_CONN_REMOTE_QPN] = {
		.admin = 1,
		.name = "remote_qpn", .kind = DP_K_INT, .lo = 1, .hi = 0xFFFFFF,
		.value = "integer, 1 … 0xFFFFFF",
		.dflt = "0x100",
		.doc = "first of the peer's QPNs (its `local_qpn`)",
	},
	[DPK_CONN_REMOTE_CTRL_QPN] = {
		.admin = 1,
		.name = "remote_ctrl_qpn", .kind = DP_K_INT, .lo = 0, .hi = 0xFFFFFF,
		.value = "integer, 0 … 0xFFFFFF",
		.dflt = "0",
		.doc = "the peer's control QPN; 0: the one after its data QPNs (`remote_qpn + "
		       "channels × generations`). Set it for a verbs peer (`sdr-verbs-peer`), "
		       "whose QPNs the NIC picks. Not with several `engines`: the peer's NIC "
		       "picks its own UDP source ports, so its frames would reach an engine by "
		       "chance",
	},
	[DPK_CONN_LOCAL_RKEY] = {
		.admin = 1,
		.name = "local_rkey", .kind = DP_K_INT, .lo = 0, .hi = UINT32_MAX,
		.value = "integer, 0 … 0xFFFFFFFF",
		.dflt = "0",
		.doc = "0: every receive has its own R_Key, derived from both sides' tags "
		       "([wire-format.md](wire-format.md#r_keys)); else the one R_Key the peer "
		       "puts in every RETH it sends us (for tests; needs `generations` ≥ 2). "
		       "Checked on every packet. With a fixed key, a receive and the one "
		       "`generations` × 2^id_bits receives later have the same slot, generation, "
		       "addresses and key: a packet delayed by that many messages (a slow path, "
		       "a deep queue) lands in the later one, so keep per-receive keys on a WAN",
	},
	[DPK_CONN_AUTH_KEY] = {
		.admin = 1,
		.name = "auth_key", .kind = DP_K_OTHER,
		.value = "32 hex digits, or `off`",
		.dflt = "off",
		.doc = "a 128-bit secret shared with the peer (the same on both sides): every "
		       "control message carries its AES-128-CMAC and the R_Keys are derived "
		       "from it "
		       "([wire-format.md](wire-format.md#authenticated-control-messages-auth_key"
		       ")). Keep the file readable by root only",
	},
	[DPK_CONN_REMOTE_RKEY] = {
		.admin = 1,
		.name = "remote_rkey", .kind = DP_K_INT, .lo = 0, .hi = UINT32_MAX,
		.value = "integer, 0 … 0xFFFFFFFF",
		.dflt = "0",
		.doc = "0: the peer's per-receive R_Keys, derived; else the one R_Key we put "
		       "in every RETH we send (a hardware RNIC receiver's memory region, as "
		       "`sdr-verbs-peer` prints it)",
	},
	[DPK_CONN_MTU] = {
		.name = "mtu", .kind = DP_K_SIZE, .lo = 256, .hi = 4096,
		.value = "size: 256, 512, 1024, 2048 or 4096",
		.dflt = "4096",
		.doc = "RoCE payload bytes per packet",
	},
	[DPK_CONN_CHUNK] = {
		.name = "chunk", .kind = DP_K_SIZE, .lo = 256, .hi = 64u << 20,
		.value = "size, 256 B … 64 MiB; a multiple of `mtu`, at most 1024 packets",
		.dflt = "64 KiB",
		.doc = "the unit of acknowledgement, retransmission and coding",
	},
	[DPK_CONN_IMM_SPLIT] = {
		.name = "imm_split", .kind = DP_K_OTHER,
		.value = "three widths `A,B,C` summing to 32; message id A in 1 … 16",
		.dflt = "`10,18,4`",
		.doc = "how the 32-bit immediate splits into message id, packet offset and "
		       "user-immediate fragment",
	},
	[DPK_CONN_CHANNELS] = {
		.name = "channels", .kind = DP_K_INT, .lo = 1, .hi = 64,
		.value = "integer, 1 … 64",
		.dflt = "8",
		.doc = "data QPNs a message's packets are spread over",
	},
	[DPK_CONN_GENERATIONS] = {
		.name = "generations", .kind = DP_K_INT, .lo = 1, .hi = 64,
		.value = "integer, 1 … 64",
		.dflt = "4",
		.doc = "QPN generations that tell a reused slot's packets from late ones; at "
		       "least 2 with a fixed `local_rkey`",
	},
	[DPK_CONN_MAX_MSG] = {
		.name = "max_msg", .kind = DP_K_SIZE, .lo = 1, .hi = 1ull << 40,
		.value = "size, 1 B … 1 TiB",
		.dflt = "8 MiB",
		.doc = "largest message; its packets (and parity) must fit the offset field",
	},
	[DPK_CONN_INFLIGHT] = {
		.name = "inflight", .kind = DP_K_INT, .lo = 1, .hi = 65536,
		.value = "integer, 1 … 65536 and at most 2^A",
		.dflt = "16",
		.doc = "messages in flight at once per direction",
	},
	[DPK_CONN_DIR] = {
		.admin = 1,
		.name = "dir", .kind = DP_K_OTHER,
		.value = "`send`, `recv` or `both`",
		.dflt = "`both`",
		.doc = "which halves this end runs",
	},
	[DPK_CONN_SCHEME] = {
		.name = "scheme", .kind = DP_K_OTHER,
		.value = "`sr`, `sr-nack`, `ec-xor:K,M`, `ec-mds:K,M` (K, M ≥ 1, K + M ≤ 255), "
			 "or `auto`",
		.dflt = "`sr`",
		.doc = "the reliability scheme. `auto` asks the analytic model "
		       "([model.md](model.md)) for the best scheme for this path: `max_msg`, "
		       "`chunk`, `mtu`, `rate` (100 Gbit/s when 0), `rtt`, `expected_drop`, "
		       "`alpha`, `beta`; `--check` prints its choice. `--scheme` and "
		       "`--traffic scheme=` override it. With `auto` on both ends the receive "
		       "side also reports the loss it sees (REPORT control messages) and the "
		       "send side keeps an estimate of the path's packet loss. Each end that "
		       "sends (`dir = send` or `both`) then changes the scheme of its own "
		       "sends as the link changes, between messages, both ends agreeing "
		       "(SCHEME control messages; with data both ways each direction changes "
		       "on its own, the other running on); it starts from `expected_drop` if "
		       "the section has one, else from `sr-nack`. With `auto`, the receiving "
		       "end takes the sender's start scheme from its HELLO, whatever its own "
		       "`expected_drop` says; two ends with different fixed schemes (other "
		       "than `sr` against `sr-nack`) take none of each other's data "
		       "(`hello_scheme_refused`, [wire-format.md](wire-format.md#tags-the-"
		       "handshake-and-a-peer-that-restarts)). A receive-only end (`dir = "
		       "recv`) follows the sender's choices, and `sdrctl conn show NAME` gives "
		       "it the model's advice. See [model.md](model.md#online-auto).",
	},
	[DPK_CONN_RTT] = {
		.name = "rtt", .kind = DP_K_TIME,
		.value = "time, more than 0",
		.dflt = "1 ms",
		.doc = "the path's round-trip time: timers, credits and the fallback timeout "
		       "derive from it",
	},
	[DPK_CONN_ALPHA] = {
		.name = "alpha", .kind = DP_K_NUMBER, .lo = 0, .hi = 100,
		.value = "number, 0 … 100",
		.dflt = "2",
		.doc = "RTO = RTT + alpha·RTT",
	},
	[DPK_CONN_RTO] = {
		.name = "rto", .kind = DP_K_OTHER,
		.value = "`configured` or `measured`",
		.dflt = "`configured`",
		.doc = "what the timers take as RTT: the configured `rtt`, or the measured "
		       "one. The sender's (the RTO, the one-resend-per-RTT limit on NACKs, the "
		       "EC silence timeout), once 16 acknowledgements were timed: the smallest "
		       "RTT measured in the last 10–20 s, with RTO = (1 + `alpha`)·that RTT but "
		       "never under the smoothed RTT + 4 deviations (RFC 6298); while no message "
		       "gets through without a resend (an `rtt` far too short), each RTO that "
		       "expires doubles it, once per RTO, up to 64× the configured one or 1 s. "
		       "The receiver's (a NACK round per RTT, the EC fallback timeout's slack, "
		       "the CTS and EC-NACK repeats), once 16 receives were timed from their "
		       "first CTS to their first whole chunk: the smallest of those in the last "
		       "10–20 s (never below the path's RTT: the sender had no credit before "
		       "the CTS), RTO = (1 + `alpha`)·it. `sdrctl conn show NAME` has a "
		       "`timers:` line.",
	},
	[DPK_CONN_BETA] = {
		.name = "beta", .kind = DP_K_NUMBER, .lo = 0, .hi = 100,
		.value = "number, 0 … 100",
		.dflt = "1",
		.doc = "slack of the EC fallback timeout, in RTTs",
	},
	[DPK_CONN_RATE] = {
		.name = "rate", .kind = DP_K_OTHER,
		.value = "rate, 1 kbit/s to 10 Tbit/s; 0: unpaced",
		.dflt = "0",
		.doc = "injection rate of data and parity chunks (token bucket)",
	},
	[DPK_CONN_BUCKET] = {
		.name = "bucket", .kind = DP_K_SIZE, .lo = 0, .hi = 1u << 30,
		.value = "size, 0 … 1 GiB",
		.dflt = "256 KiB",
		.doc = "burst allowed above `rate`",
	},
	[DPK_CONN_ACK_EVERY] = {
		.name = "ack_every", .kind = DP_K_INT, .lo = 0, .hi = 1u << 20,
		.value = "integer, 0 … 1048576",
		.dflt = "8",
		.doc = "the receiver ACKs after this many new chunks (0: off)",
	},
	[DPK_CONN_ACK_INTERVAL] = {
		.name = "ack_interval", .kind = DP_K_TIME,
		.value = "time",
		.dflt = "50 µs",
		.doc = "… and at least this often while chunks arrive (0: off)",
	},
	[DPK_CONN_NACK_ALLOWANCE] = {
		.name = "nack_allowance", .kind = DP_K_TIME,
		.value = "time",
		.dflt = "RTT/100, at least 20 µs",
		.doc = "`sr-nack`: how long a hole must stay open before it is NACKed (the "
		       "reordering allowance)",
	},
	[DPK_CONN_GLOBAL_TIMEOUT] = {
		.name = "global_timeout", .kind = DP_K_TIME,
		.value = "time",
		.dflt = "60 s",
		.doc = "a message not complete by then fails (0: never)",
	},
	[DPK_CONN_FALLBACK] = {
		.name = "fallback", .kind = DP_K_OTHER,
		.value = "`holes` or `whole`",
		.dflt = "`holes`",
		.doc = "EC fallback: repeat the missing chunks of a failed submessage, or the "
		       "whole submessage as the published design does",
	},
	[DPK_CONN_EXPECTED_DROP] = {
		.name = "expected_drop", .kind = DP_K_OTHER,
		.value = "probability, below 1",
		.dflt = "none (`auto` starts from `sr-nack`; where the immediate has no room for "
			"another code, so that the scheme cannot change, it picks once for 1e-4)",
		.doc = "the loss rate `scheme = auto` starts from; the connection's own "
		       "estimate takes over as it runs (one direction); unused otherwise",
	},
	[DPK_CONN_AUTO_MIN_CHUNK] = {
		.name = "auto_min_chunk", .kind = DP_K_SIZE, .lo = 256, .hi = 64u << 20,
		.value = "size: `chunk` halved 0 … 10 times, a multiple of `mtu`",
		.dflt = "`chunk` / 4, at least `mtu`",
		.doc = "the smallest chunk `scheme = auto` may change to: it weighs the "
		       "configured `chunk` and each half of it down to this (a smaller chunk "
		       "loses fewer packets per chunk, so a code repairs more at high loss). "
		       "The application's view stays one byte per `chunk`. `auto_min_chunk = "
		       "chunk`: the chunk never changes. Connection state is sized for this "
		       "chunk (4 times the chunk bitmaps at the default). Unused without `auto`",
	},
	[DPK_CONN_TCLASS] = {
		.admin = 1,
		.name = "tclass", .kind = DP_K_INT, .lo = 0, .hi = 255,
		.value = "integer, 0 … 255",
		.dflt = "0",
		.doc = "IPv4 TOS / IPv6 traffic class (DSCP and ECN bits) of every frame",
	},
	[DPK_CONN_PKEY] = {
		.admin = 1,
		.name = "pkey", .kind = DP_K_INT, .lo = 1, .hi = 0xFFFF,
		.value = "integer, 1 … 0xFFFF",
		.dflt = "0xFFFF",
		.doc = "the BTH partition key",
	},
	[DPK_CONN_PEER_CHECK] = {
		.admin = 1,
		.name = "peer_check", .kind = DP_K_OTHER,
		.value = "`yes` or `no`",
		.dflt = "`yes`",
		.doc = "a packet to one of the connection's QPNs must come from `peer_ip` "
		       "(else `wrong_peer_address`) and carry the connection's P_Key, "
		       "membership bit aside (else `wrong_pkey`); both dropped and counted on "
		       "the port",
	},
	[DPK_CONN_PEER_UDP_SPORT] = {
		.admin = 1,
		.name = "peer_udp_sport", .kind = DP_K_OTHER,
		.value = "`LO-HI` or `any`",
		.dflt = "`any`",
		.doc = "the UDP source ports the peer sends from; others are dropped "
		       "(`udp_sport_out_of_range`). RoCEv2 NICs and this dataplane use "
		       "49152-65535",
	},
	[DPK_CONN_PATHS] = {
		.admin = 1,
		.name = "paths", .kind = DP_K_INT, .lo = 1, .hi = PATH_SEL_MAX_PATHS,
		.value = "integer, 1 … 8",
		.dflt = "1",
		.doc = "long-haul paths between the two sites, told apart by the network's "
		       "ECMP hash of the UDP source port (taken to be the link emulator's, "
		       "[multipath.md](multipath.md)). With 2 or more, the receive side "
		       "reports per data QPN what arrived (PATHS messages), and the send side "
		       "places its channels on paths by their source port, keeps per-path loss "
		       "and failure estimates and moves channels as `path_policy` says; "
		       "`sdrctl path show`. At most `channels` paths (each channel takes one) "
		       "unless `path_policy = hash`. Both ends set it. Not with "
		       "`remote_ctrl_qpn`",
	},
	[DPK_CONN_PATH_POLICY] = {
		.name = "path_policy", .kind = DP_K_OTHER,
		.value = "`hash`, `spray` or `optimise`",
		.dflt = "`optimise`",
		.doc = "`hash`: each channel stays where its default source port hashes (what "
		       "plain ECMP does); `spray`: channel c on path c mod `paths`, fixed; "
		       "`optimise`: spray first, then every `path_period` the channels go to "
		       "the set of paths the model finds fastest for the connection's "
		       "`max_msg` messages (each path's measured loss and round trip), leaving "
		       "failed paths at once and moving otherwise only for a 10 % gain "
		       "([multipath.md](multipath.md))",
	},
	[DPK_CONN_PATH_RATE] = {
		.name = "path_rate", .kind = DP_K_OTHER,
		.value = "rate, 1 kbit/s to 10 Tbit/s",
		.dflt = "0 (a path carries the connection's whole `rate`)",
		.doc = "what one path carries at most: the decision weighs a lossy or long "
		       "path's cost against the capacity leaving it costs",
	},
	[DPK_CONN_PATH_FAIL] = {
		.name = "path_fail", .kind = DP_K_TIME,
		.value = "time",
		.dflt = "3 × `rtt`, at least 10 ms (also for 0)",
		.doc = "a path whose data QPNs sent for this long with nothing arriving is "
		       "failed (and left); longer than `rtt`",
	},
	[DPK_CONN_PATH_PERIOD] = {
		.name = "path_period", .kind = DP_K_TIME,
		.value = "time",
		.dflt = "1 s",
		.doc = "how often the management thread decides where the channels go; 1 ms "
		       "or more",
	},
	[DPK_CONN_PATH_SPORTS] = {
		.admin = 1,
		.name = "path_sports", .kind = DP_K_OTHER,
		.value = "list of UDP ports, one per path",
		.dflt = "none (the network hashes ports as the link emulator does)",
		.doc = "the operator's source port for each path (say, found with traceroute): "
		       "every channel placed on path k leaves with the k-th port. Not with "
		       "`path_policy = hash`; all different; with RSS steering each must also "
		       "land on the peer's engine, or the connection is not made (and a "
		       "connection with `stripes` cannot have them: one port reaches one engine)",
	},
	[DPK_CONN_PATH_PROBE] = {
		.name = "path_probe", .kind = DP_K_TIME,
		.value = "time",
		.dflt = "10 s",
		.doc = "a failed path no channel is on gets one back this often, to see "
		       "whether it was repaired (its messages wait up to `path_fail` if not); "
		       "0: never",
	},
	[DPK_CONN_PATH_OBJECTIVE] = {
		.name = "path_objective", .kind = DP_K_OTHER,
		.value = "`sum`, `max` or `own`",
		.dflt = "`sum`",
		.doc = "with other connections of the same port and `path_rate` (all "
		       "`optimise`, the same `paths` and objective): `sum`: they decide together, "
		       "the sets of paths that minimise the sum of their modelled times; `max`: "
		       "together, the largest of their times as low as it can be (the slowest "
		       "connection first); `own`: each minimises its own time, seeing what the "
		       "others send on each path ([multipath.md](multipath.md))",
	},
};

const struct dp_key_section dp_conn_keys = { "conn", "[conn NAME]", DPK_CONN_COUNT, conn_keys };

const struct dp_key_section *const dp_key_sections[] = {
	&dp_dataplane_keys, &dp_pipeline_keys, &dp_port_keys, &dp_link_keys, &dp_conn_keys, NULL,
};

int
dp_key_find(const struct dp_key_section *s, const char *name)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (strcmp(s->keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

const char *
dp_key_list(const struct dp_key_section *s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < s->n && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", s->keys[i].name);

		if (w < 0)
			break;
		off += (size_t)w;
	}
	return buf;
}
