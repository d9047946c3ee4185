//! `--listen`: a small HTTP/1.1 server on its own thread. `GET /metrics`
//! serves the newest exposition (`text/plain; version=0.0.4`), `/healthz`
//! is the agent's own liveness (200 while telemetry sampling keeps up,
//! 503 when the last sample is older than three intervals), `/health` is
//! readiness from the node's verdict, stack and hardware (200 ok/warning, 503 failure or
//! unknown). One request per connection, bounded reads, read and write
//! timeouts: a slow or hostile client cannot stall the loop.

use crate::daemon::Shared;
use crate::MonitorError;
use gpukb_doctor::Verdict;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `9400` → 127.0.0.1:9400; `HOST:PORT` as given (`0.0.0.0:9400`, `[::]:9400`).
pub fn parse_listen(text: &str) -> Result<SocketAddr, MonitorError> {
    let t = text.trim();
    let bad = |why: &str| {
        MonitorError::Listen(format!("--listen {t:?}: {why} (write PORT or HOST:PORT)"))
    };
    if let Ok(port) = t.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let mut addrs = t.to_socket_addrs().map_err(|e| bad(&e.to_string()))?;
    addrs.next().ok_or_else(|| bad("no address"))
}

/// Binds `addr` and serves `shared` until the process ends. Returns the
/// bound address (port 0 picks one).
pub fn serve(addr: SocketAddr, shared: Arc<Mutex<Shared>>) -> Result<SocketAddr, MonitorError> {
    let listener = TcpListener::bind(addr)
        .map_err(|e| MonitorError::Listen(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| MonitorError::Listen(format!("cannot listen on {addr}: {e}")))?;
    std::thread::Builder::new()
        .name("gpukb:http".into())
        .spawn(move || {
            loop {
                match listener.accept() {
                    Ok((c, _)) => {
                        let _ = handle(c, &shared);
                    }
                    // Out of descriptors and the like: back off, keep serving.
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        })
        .map_err(|e| MonitorError::Listen(format!("cannot start the listener thread: {e}")))?;
    Ok(bound)
}

/// The response to one request path: status, content type, body.
pub fn respond(path: &str, s: &Shared, now: Instant) -> (u16, &'static str, String) {
    let text = "text/plain; charset=utf-8";
    match path {
        "/metrics" => (
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            s.metrics.clone(),
        ),
        "/healthz" => {
            let stale = s.interval.max(Duration::from_secs(1)) * 3;
            match s.last_sample {
                Some(t) if now.duration_since(t) <= stale => (200, text, "ok: sampling\n".into()),
                Some(t) => (
                    503,
                    text,
                    format!(
                        "stale: last sample {:.0} s ago\n",
                        now.duration_since(t).as_secs_f64()
                    ),
                ),
                None => (503, text, "starting: no sample yet\n".into()),
            }
        }
        "/health" => match s.verdict {
            Some(Verdict::Ok) => (200, text, "ok\n".into()),
            Some(Verdict::Warning) => (200, text, "warning\n".into()),
            Some(Verdict::Failure) => (503, text, "failure\n".into()),
            Some(Verdict::Unknown) => (503, text, "unknown\n".into()),
            None => (503, text, "no snapshot yet\n".into()),
        },
        _ => (404, text, "not found: /metrics, /health, /healthz\n".into()),
    }
}

fn handle(mut c: TcpStream, shared: &Arc<Mutex<Shared>>) -> std::io::Result<()> {
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    c.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut buf = [0u8; 4096];
    let mut got = 0;
    // Read the request head (bounded).
    while got < buf.len() {
        let n = c.read(&mut buf[got..])?;
        if n == 0 {
            break;
        }
        got += n;
        if buf[..got].windows(4).any(|w| w == b"\r\n\r\n")
            || buf[..got].windows(2).any(|w| w == b"\n\n")
        {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf[..got]);
    let mut parts = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, ctype, body) = if method != "GET" && method != "HEAD" {
        (405, "text/plain; charset=utf-8", "only GET\n".to_string())
    } else {
        let s = shared.lock().unwrap_or_else(|p| p.into_inner()).clone();
        respond(path, &s, Instant::now())
    };
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Service Unavailable",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != "HEAD" {
        out.extend_from_slice(body.as_bytes());
    }
    c.write_all(&out)?;
    c.flush()
}
