//! `roundup export --to otlp --endpoint URL`: each run's trace sent to an
//! OpenTelemetry receiver over OTLP/HTTP, as protobuf
//! (`application/x-protobuf`, the content type every receiver takes), the
//! moment the run finishes.
//!
//! The output of the replay is taken line by line (one
//! `ExportTraceServiceRequest` a run), encoded by the library
//! (`roundup::encoders::otlp::protobuf`) and POSTed, one connection a
//! request: a run is seconds to hours of an agent's work, so the requests
//! are few. A plain `http://` URL only (a collector or backend on the
//! machine or the network, as OTLP/HTTP's port 4318 usually is): no TLS
//! library is linked. Answers 429, 502, 503 and 504 are retried, as the
//! OTLP specification asks, twice, after 1 and 2 seconds; any other answer
//! but 2xx ends the export with an error that quotes it.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use roundup::encoders::otlp::protobuf;

/// How long a connection, a write or a read may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Where the traces go: `http://host[:port][/path]`; a URL without a path
/// gets OTLP's `/v1/traces`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    host: String,
    port: u16,
    path: String,
}

impl Endpoint {
    /// Reads a URL; the error says what is expected.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let refuse = |why: &str| format!("--endpoint {url:?}: {why} (e.g. http://127.0.0.1:4318)");
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            if url.starts_with("https://") {
                refuse("https is not supported: send to a collector over http")
            } else {
                refuse("an http:// URL is expected")
            }
        })?;
        let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
        let (host, port) = match authority.rsplit_once(':') {
            // An IPv6 literal is bracketed: its colons are not a port's.
            Some((host, port)) if !port.contains(']') => {
                (host, port.parse::<u16>().map_err(|_| refuse("the port is not a number"))?)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(refuse("no host"));
        }
        let path = if path.is_empty() || path == "/" { "/v1/traces" } else { path };
        Ok(Endpoint { host: host.to_owned(), port, path: path.to_owned() })
    }

    /// POSTs one protobuf body; retries what OTLP says is worth retrying.
    fn post(&self, body: &[u8]) -> io::Result<()> {
        let mut waits = [Duration::from_secs(1), Duration::from_secs(2)].into_iter();
        loop {
            let (status, answer) = self.post_once(body)?;
            if (200..300).contains(&status) {
                return Ok(());
            }
            match (status, waits.next()) {
                (429 | 502 | 503 | 504, Some(wait)) => std::thread::sleep(wait),
                _ => {
                    let answer = String::from_utf8_lossy(&answer);
                    let answer: String = answer.chars().take(300).collect();
                    let error = format!("{} answered HTTP {status}: {}", self.url(), answer.trim());
                    return Err(io::Error::other(error));
                }
            }
        }
    }

    /// One request: the answer's status and (the start of) its body.
    fn post_once(&self, body: &[u8]) -> io::Result<(u16, Vec<u8>)> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", self.url()));
        let mut stream = TcpStream::connect((host, self.port)).map_err(named)?;
        stream.set_read_timeout(Some(TIMEOUT)).map_err(named)?;
        stream.set_write_timeout(Some(TIMEOUT)).map_err(named)?;
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: roundup/{}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.path,
            self.host,
            self.port,
            env!("CARGO_PKG_VERSION"),
            body.len()
        );
        stream.write_all(head.as_bytes()).map_err(named)?;
        stream.write_all(body).map_err(named)?;
        stream.flush().map_err(named)?;
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        reader.read_line(&mut status_line).map_err(named)?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse::<u16>().ok())
            .ok_or_else(|| io::Error::other(format!("{}: not an HTTP answer: {status_line:?}", self.url())))?;
        // The rest (headers and body) only to quote an error.
        let mut answer = Vec::new();
        reader.take(64 << 10).read_to_end(&mut answer).map_err(named)?;
        let body = answer.windows(4).position(|w| w == b"\r\n\r\n").map_or(Vec::new(), |at| answer[at + 4..].to_vec());
        Ok((status, body))
    }

    fn url(&self) -> String {
        format!("http://{}:{}{}", self.host, self.port, self.path)
    }
}

/// The replay's output, sent: each complete line is a run's trace.
pub struct Exporter {
    endpoint: Endpoint,
    pending: Vec<u8>,
}

impl Exporter {
    pub fn new(endpoint: Endpoint) -> Self {
        Exporter { endpoint, pending: Vec::new() }
    }

    fn send_lines(&mut self) -> io::Result<()> {
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let request: serde_json::Value =
                serde_json::from_slice(&line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            for part in batches(request) {
                let body = protobuf::encode(&part).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                self.endpoint.post(&body)?;
            }
        }
        Ok(())
    }
}

/// The most spans one request carries: a long run (thousands of tool
/// calls) is sent in several requests, each under the receivers' usual
/// size limits (the Collector's is 4 MiB by default over gRPC). A trace
/// may come in any number of requests: the spans carry its id.
const SPANS_PER_REQUEST: usize = 512;

/// A request as requests of at most [`SPANS_PER_REQUEST`] spans, each
/// with the same resource and scope.
fn batches(mut request: serde_json::Value) -> Vec<serde_json::Value> {
    let spans = match request.pointer_mut("/resourceSpans/0/scopeSpans/0/spans") {
        Some(serde_json::Value::Array(spans)) if spans.len() > SPANS_PER_REQUEST => std::mem::take(spans),
        _ => return vec![request],
    };
    spans
        .chunks(SPANS_PER_REQUEST)
        .map(|chunk| {
            let mut part = request.clone();
            if let Some(slot) = part.pointer_mut("/resourceSpans/0/scopeSpans/0/spans") {
                *slot = serde_json::Value::Array(chunk.to_vec());
            }
            part
        })
        .collect()
}

impl Write for Exporter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.send_lines()?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_lines()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_is_sent_in_parts() {
        let spans: Vec<serde_json::Value> = (0..1200).map(|n| serde_json::json!({"name": n.to_string()})).collect();
        let request = serde_json::json!({"resourceSpans": [{"resource": {"attributes": []},
            "scopeSpans": [{"scope": {"name": "roundup"}, "spans": spans}]}]});
        let parts = batches(request.clone());
        let sizes: Vec<usize> =
            parts.iter().map(|p| p["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().len()).collect();
        assert_eq!(sizes, [512, 512, 176]);
        assert!(parts.iter().all(|p| p["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"] == "roundup"));
        let names: Vec<serde_json::Value> = parts
            .iter()
            .flat_map(|p| p["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone())
            .collect();
        assert_eq!(names, request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone());
        let small = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a"}]}]}]});
        assert_eq!(batches(small.clone()), [small]);
    }

    #[test]
    fn endpoints_are_read() {
        let at = |host: &str, port, path: &str| Ok(Endpoint { host: host.into(), port, path: path.into() });
        assert_eq!(Endpoint::parse("http://127.0.0.1:4318"), at("127.0.0.1", 4318, "/v1/traces"));
        assert_eq!(Endpoint::parse("http://localhost:6006/v1/traces"), at("localhost", 6006, "/v1/traces"));
        assert_eq!(Endpoint::parse("http://collector/otlp/v1/traces"), at("collector", 80, "/otlp/v1/traces"));
        assert_eq!(Endpoint::parse("http://[::1]:4318/"), at("[::1]", 4318, "/v1/traces"));
        assert!(Endpoint::parse("https://x:4318").unwrap_err().contains("https is not supported"));
        assert!(Endpoint::parse("127.0.0.1:4318").unwrap_err().contains("an http:// URL is expected"));
        assert!(Endpoint::parse("http://x:port").unwrap_err().contains("the port is not a number"));
        assert!(Endpoint::parse("http://:4318").unwrap_err().contains("no host"));
    }
}
