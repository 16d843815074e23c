//! `ecnlab-router`: forwards Ethernet frames between two interfaces of its network namespace
//! through the testbed's forwarding engine (ecnlab's queue disciplines, rate and delays).
//!
//! ```text
//! ecnlab-router --config ROUTER.json [--out SAMPLES.jsonl] [--client-if NAME] [--server-if NAME]
//!               [--busy-poll-us N] [--rt-priority P]
//! ecnlab-router offload-off IFACE...
//! ```
//!
//! I/O: one AF_PACKET socket per interface (promiscuous, own transmissions ignored), an epoll
//! set with both sockets, a timerfd armed at the engine's next event on CLOCK_MONOTONIC (timer
//! slack set to 1 ns) and a signalfd for SIGINT and SIGTERM, on which the router writes its
//! final counters and exits 0. Time is CLOCK_MONOTONIC in ns since start (`start` gives the
//! start's CLOCK_MONOTONIC time, `monotonic_ns`, to align other clocks with it).
//!
//! Timer resolution: a sleeping router wakes some microseconds after its timer (tens under
//! load, milliseconds when the CPU is contended). `--busy-poll-us N` spins instead of sleeping
//! when the next event is less than N us away (a core at 100% while traffic flows);
//! `--rt-priority P` runs the router under SCHED_FIFO at priority P (1-99), so other
//! processes do not delay its wake-ups. Neither changes the link's own times (the engine runs
//! its events at their times); they change how late frames actually leave.
//!
//! Output (JSON lines): `{"type": "start", ...}`, then every `sample_interval_ms` one
//! `{"type": "sample", "dir": "up"|"down", ...}` per direction (occupancy, cumulative
//! counters, the discipline's variables under `aqm`), and at exit `{"type": "final", ...}` per
//! direction and `{"type": "io", ...}` (socket errors).
//!
//! `offload-off` switches off checksum offload, scatter-gather, TSO, GSO and GRO on each
//! interface (the legacy ethtool ioctls), so that senders put finished, MTU-sized frames on
//! the wire: the router moves frames as bytes and cannot complete a checksum the sender left
//! to hardware, nor queue a 64 KB super-packet as one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::RawFd;
use std::process::ExitCode;

use ecnlab::packet::Direction;
use ecnlab_testbed::{Path, RouterConfig};
use serde_json::{json, Value};

/// Largest frame read (bytes); larger ones are truncated and counted as oversize by the engine.
const RX_BUF: usize = 65536;
/// Frames read from one socket before the other gets its turn.
const RX_BATCH: usize = 64;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = if args.first().map(String::as_str) == Some("offload-off") {
        offload_off(&args[1..])
    } else {
        run(&args)
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ecnlab-router: {e}");
            ExitCode::from(2)
        }
    }
}

fn usage() -> String {
    "usage: ecnlab-router --config ROUTER.json [--out SAMPLES.jsonl] [--client-if NAME] [--server-if NAME] [--busy-poll-us N] [--rt-priority P]\n       ecnlab-router offload-off IFACE...".into()
}

fn errno(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn run(args: &[String]) -> Result<(), String> {
    let (mut config, mut out, mut client_if, mut server_if) = (None, None, None, None);
    let (mut busy_poll, mut rt_priority) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let slot = match a.as_str() {
            "--config" => &mut config,
            "--out" => &mut out,
            "--client-if" => &mut client_if,
            "--server-if" => &mut server_if,
            "--busy-poll-us" => &mut busy_poll,
            "--rt-priority" => &mut rt_priority,
            _ => return Err(format!("unknown argument {a:?}\n{}", usage())),
        };
        *slot = Some(it.next().ok_or_else(|| format!("{a} needs a value\n{}", usage()))?.clone());
    }
    let path = config.ok_or_else(usage)?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut cfg = RouterConfig::from_json(&text).map_err(|e| format!("{path}: {e}"))?;
    if let Some(c) = client_if {
        cfg.client_interface = c;
    }
    if let Some(s) = server_if {
        cfg.server_interface = s;
    }
    for (name, field) in [(&cfg.client_interface, "client_interface"), (&cfg.server_interface, "server_interface")] {
        if name.is_empty() {
            return Err(format!("{path}: {field}: missing (or give --client-if / --server-if)"));
        }
    }
    let (up, down) = cfg.paths().map_err(|e| format!("{path}: {e}"))?;
    let mut paths = [Path::new(&up, Direction::Up), Path::new(&down, Direction::Down)];
    let mut out: Box<dyn Write> = match out {
        Some(p) => Box::new(BufWriter::new(File::create(&p).map_err(|e| format!("{p}: {e}"))?)),
        None => Box::new(BufWriter::new(std::io::stdout())),
    };
    let socks = [open_packet_socket(&cfg.client_interface)?, open_packet_socket(&cfg.server_interface)?];
    let number = |v: Option<String>, flag: &str, max: u64| -> Result<u64, String> {
        match v {
            None => Ok(0),
            Some(v) => v.parse::<u64>().ok().filter(|&n| n <= max).ok_or_else(|| format!("{flag}: {v:?} must be an integer from 0 to {max}")),
        }
    };
    let busy_poll_ns = number(busy_poll, "--busy-poll-us", 1_000_000)? * 1000;
    let rt_priority = number(rt_priority, "--rt-priority", 99)?;
    if rt_priority > 0 {
        let param = libc::sched_param { sched_priority: rt_priority as i32 };
        // SAFETY: a valid sched_param for this process.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } < 0 {
            return Err(errno("--rt-priority: sched_setscheduler(SCHED_FIFO)"));
        }
    }
    let mut io = Io::new(socks)?;
    io.busy_poll_ns = busy_poll_ns;
    let interval = ecnlab::engine::time::from_millis(cfg.sample_interval_ms);
    let t0 = monotonic_ns();
    line(&mut out, json!({"type": "start", "client_interface": cfg.client_interface, "server_interface": cfg.server_interface,
        "up_rate_bps": up.rate_bps, "down_rate_bps": down.rate_bps, "sample_interval_ns": interval, "pid": std::process::id(), "monotonic_ns": t0}))?;
    out.flush().map_err(|e| e.to_string())?;
    let stats = io.run(&mut paths, t0, interval, &mut out)?;
    let now = monotonic_ns() - t0;
    for (p, dir) in paths.iter_mut().zip(["up", "down"]) {
        let mut v = serde_json::to_value(p.snapshot(now)).map_err(|e| e.to_string())?;
        v["type"] = "final".into();
        v["dir"] = dir.into();
        line(&mut out, v)?;
    }
    line(&mut out, json!({"type": "io", "t_ns": now, "tx_errors": stats.tx_errors, "rx_errors": stats.rx_errors, "outgoing_skipped": stats.outgoing_skipped}))?;
    out.flush().map_err(|e| e.to_string())
}

fn line(out: &mut dyn Write, v: Value) -> Result<(), String> {
    writeln!(out, "{v}").map_err(|e| format!("writing the output: {e}"))
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn if_index(name: &str) -> Result<libc::c_int, String> {
    let c = std::ffi::CString::new(name).map_err(|_| format!("interface name {name:?} holds a NUL"))?;
    // SAFETY: a NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(errno(&format!("interface {name:?}")));
    }
    Ok(i as libc::c_int)
}

fn setsockopt_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> libc::c_int {
    // SAFETY: a pointer to an int of the size given.
    unsafe { libc::setsockopt(fd, level, opt, &v as *const _ as *const libc::c_void, std::mem::size_of::<libc::c_int>() as u32) }
}

/// An AF_PACKET socket bound to `name`, promiscuous, non-blocking, that does not see its own
/// transmissions.
fn open_packet_socket(name: &str) -> Result<RawFd, String> {
    let ifindex = if_index(name)?;
    // Protocol 0 until bound, so no frame of another interface slips in before the bind.
    // SAFETY: plain syscalls on values built here; every result is checked.
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(errno("socket(AF_PACKET) (needs CAP_NET_RAW)"));
        }
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex;
        if libc::bind(fd, &sll as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32) < 0 {
            return Err(errno(&format!("bind to {name:?}")));
        }
        let mut mreq: libc::packet_mreq = std::mem::zeroed();
        mreq.mr_ifindex = ifindex;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        if libc::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq as *const _ as *const libc::c_void, std::mem::size_of::<libc::packet_mreq>() as u32) < 0 {
            return Err(errno(&format!("promiscuous mode on {name:?}")));
        }
        // Kernels before 4.20 lack the option: outgoing frames are then skipped by type.
        setsockopt_int(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
        // Room for bursts (FORCE: beyond rmem_max, as root).
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 8 << 20);
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 8 << 20);
        Ok(fd)
    }
}

#[derive(Default)]
struct IoStats {
    tx_errors: u64,
    rx_errors: u64,
    outgoing_skipped: u64,
}

/// The sockets (client side, server side), the timer, the signals and the epoll set.
struct Io {
    socks: [RawFd; 2],
    timer: RawFd,
    epoll: RawFd,
    /// Spin instead of sleeping when the next event is closer than this (ns).
    busy_poll_ns: u64,
}

const TOKEN_TIMER: u64 = 2;
const TOKEN_SIGNAL: u64 = 3;

impl Io {
    fn new(socks: [RawFd; 2]) -> Result<Io, String> {
        // SAFETY: plain syscalls on values built here; every result is checked.
        unsafe {
            // Wake-ups as close to the armed time as the kernel allows (default slack: 50 us).
            libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
            let timer = libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC);
            if timer < 0 {
                return Err(errno("timerfd_create"));
            }
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            libc::sigaddset(&mut mask, libc::SIGINT);
            libc::sigaddset(&mut mask, libc::SIGTERM);
            if libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut()) < 0 {
                return Err(errno("sigprocmask"));
            }
            let signals = libc::signalfd(-1, &mask, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC);
            if signals < 0 {
                return Err(errno("signalfd"));
            }
            let epoll = libc::epoll_create1(libc::EPOLL_CLOEXEC);
            if epoll < 0 {
                return Err(errno("epoll_create1"));
            }
            for (fd, token) in [(socks[0], 0), (socks[1], 1), (timer, TOKEN_TIMER), (signals, TOKEN_SIGNAL)] {
                let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
                if libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, fd, &mut ev) < 0 {
                    return Err(errno("epoll_ctl"));
                }
            }
            Ok(Io { socks, timer, epoll, busy_poll_ns: 0 })
        }
    }

    /// Forwards until SIGINT or SIGTERM, writing samples every `interval` ns.
    fn run(&self, paths: &mut [Path; 2], t0: u64, interval: u64, out: &mut dyn Write) -> Result<IoStats, String> {
        let mut stats = IoStats::default();
        let mut buf = vec![0u8; RX_BUF];
        let mut next_sample = interval;
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
        loop {
            // Read what waits on each side (a batch at a time, alternating), stamping each
            // frame with its own read time.
            let mut more = true;
            while more {
                more = false;
                for side in 0..2 {
                    for _ in 0..RX_BATCH {
                        match self.recv(side, &mut buf, &mut stats) {
                            Some(n) => {
                                let now = monotonic_ns() - t0;
                                paths[side].arrive(&buf[..n.min(RX_BUF)], now);
                                // Forward what became ready, so the other side sees no burst.
                                self.flush(paths, now, &mut stats);
                                more = true;
                            }
                            None => break,
                        }
                    }
                }
            }
            let now = monotonic_ns() - t0;
            self.flush(paths, now, &mut stats);
            while now >= next_sample {
                for (p, dir) in paths.iter_mut().zip(["up", "down"]) {
                    sample(p, dir, next_sample, out)?;
                }
                next_sample += interval;
            }
            let next = paths.iter().filter_map(Path::next_wakeup).chain([next_sample]).min().unwrap_or(next_sample);
            // Spin (look without waiting) when the next event is near; sleep on the timer else.
            let spin = next.saturating_sub(monotonic_ns() - t0) < self.busy_poll_ns;
            let timeout = if spin { 0 } else { -1 };
            if !spin {
                self.arm(t0 + next)?;
            }
            // SAFETY: a valid buffer of events.
            let n = unsafe { libc::epoll_wait(self.epoll, events.as_mut_ptr(), events.len() as i32, timeout) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(errno("epoll_wait"));
            }
            for ev in &events[..n as usize] {
                match ev.u64 {
                    TOKEN_SIGNAL => return Ok(stats),
                    TOKEN_TIMER => {
                        let mut expirations = 0u64;
                        // SAFETY: reads 8 bytes into a u64.
                        unsafe { libc::read(self.timer, &mut expirations as *mut u64 as *mut libc::c_void, 8) };
                    }
                    _ => {}
                }
            }
        }
    }

    /// One frame from side `side`'s socket, its length (which may exceed the buffer), or
    /// `None` when nothing waits.
    fn recv(&self, side: usize, buf: &mut [u8], stats: &mut IoStats) -> Option<usize> {
        loop {
            // SAFETY: a valid buffer and address storage of the sizes given.
            let (n, pkttype) = unsafe {
                let mut sll: libc::sockaddr_ll = std::mem::zeroed();
                let mut len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
                let n = libc::recvfrom(self.socks[side], buf.as_mut_ptr() as *mut libc::c_void, buf.len(), libc::MSG_TRUNC, &mut sll as *mut _ as *mut libc::sockaddr, &mut len);
                (n, sll.sll_pkttype)
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::Interrupted {
                    stats.rx_errors += 1;
                }
                return None;
            }
            if pkttype == libc::PACKET_OUTGOING {
                stats.outgoing_skipped += 1;
                continue;
            }
            return Some(n as usize);
        }
    }

    /// Sends every frame the paths have ready: up-path frames out on the server side,
    /// down-path frames out on the client side.
    fn flush(&self, paths: &mut [Path; 2], now: u64, stats: &mut IoStats) {
        for (side, p) in paths.iter_mut().enumerate() {
            let fd = self.socks[1 - side];
            p.poll(now, |f| {
                // SAFETY: a valid buffer of the length given.
                let n = unsafe { libc::send(fd, f.as_ptr() as *const libc::c_void, f.len(), 0) };
                if n < 0 {
                    stats.tx_errors += 1;
                }
            });
        }
    }

    /// Arms the timer at absolute monotonic time `at_ns`.
    fn arm(&self, at_ns: u64) -> Result<(), String> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (at_ns / 1_000_000_000) as i64, tv_nsec: (at_ns % 1_000_000_000) as i64 },
        };
        // SAFETY: a valid itimerspec.
        if unsafe { libc::timerfd_settime(self.timer, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) } < 0 {
            return Err(errno("timerfd_settime"));
        }
        Ok(())
    }
}

fn sample(p: &mut Path, dir: &str, t: u64, out: &mut dyn Write) -> Result<(), String> {
    let mut v = serde_json::to_value(p.snapshot(t)).map_err(|e| e.to_string())?;
    let mut aqm = serde_json::Map::new();
    p.sample_aqm(t, &mut |name, x| {
        aqm.insert(name.into(), x.into());
    });
    v["type"] = "sample".into();
    v["dir"] = dir.into();
    v["aqm"] = aqm.into();
    line(out, v)
}

/// `offload-off IFACE...`: checksum offload, scatter-gather, TSO, GSO and GRO off.
fn offload_off(ifaces: &[String]) -> Result<(), String> {
    const SIOCETHTOOL: libc::c_ulong = 0x8946;
    // ETHTOOL_STXCSUM, ETHTOOL_SSG, ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO (linux/ethtool.h).
    const CMDS: [(u32, &str); 5] = [(0x17, "tx checksum"), (0x19, "scatter-gather"), (0x1f, "TSO"), (0x24, "GSO"), (0x2c, "GRO")];
    if ifaces.is_empty() {
        return Err(usage());
    }
    // SAFETY: an ioctl with an ifreq naming the interface and pointing at an ethtool_value.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(errno("socket"));
        }
        for name in ifaces {
            if name.len() >= libc::IFNAMSIZ {
                return Err(format!("interface name {name:?} is too long"));
            }
            for (cmd, what) in CMDS {
                let mut value = [cmd, 0u32];
                let mut ifr: libc::ifreq = std::mem::zeroed();
                for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
                    *d = s as libc::c_char;
                }
                ifr.ifr_ifru.ifru_data = value.as_mut_ptr() as *mut libc::c_char;
                if libc::ioctl(fd, SIOCETHTOOL as _, &mut ifr) < 0 {
                    return Err(errno(&format!("switching {what} off on {name:?}")));
                }
            }
        }
        libc::close(fd);
    }
    Ok(())
}
