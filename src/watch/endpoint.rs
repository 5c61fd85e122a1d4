//! `--metrics HOST:PORT`'s HTTP endpoint: `GET /metrics` answers the
//! board rendered at that moment (`metrics.rs`), `GET /` a pointer to it,
//! anything else 404; one response per connection (`Connection: close`),
//! which is how Prometheus scrapes. Requests are parsed with httparse; the
//! body of a GET is none and is not read.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::metrics::{Board, unix_now};

/// Binds `--metrics` and serves `board` there in a task of its own (the
/// caller aborts it when the watch ends).
pub async fn start(
    props: &crate::settings::MetricsProps,
    board: &Board,
    progress: &crate::report::progress::Progress,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let listener = TcpListener::bind(props.addr).await.map_err(|e| {
        anyhow::anyhow!(
            "--metrics {} cannot listen ({e}): the port is {}; choose another",
            props.addr,
            crate::platform::procfs::describe_holders(props.addr.port())
        )
    })?;
    progress.say(&format!(
        "serving the verdicts at http://{}/metrics",
        listener.local_addr()?
    ));
    Ok(tokio::spawn(serve(listener, board.clone())))
}

/// Serves the board on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, board: Board) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let board = board.clone();
        tokio::spawn(async move {
            let mut buffer = vec![0u8; 8192];
            let mut read = 0;
            // A request line and headers; the body (none for GET) is ignored.
            let path = loop {
                let Ok(n) = stream.read(&mut buffer[read..]).await else {
                    return;
                };
                if n == 0 {
                    return;
                }
                read += n;
                let mut headers = [httparse::EMPTY_HEADER; 32];
                let mut request = httparse::Request::new(&mut headers);
                match request.parse(&buffer[..read]) {
                    Ok(httparse::Status::Complete(_)) => {
                        break request.path.unwrap_or("/").to_string();
                    }
                    Ok(httparse::Status::Partial) if read < buffer.len() => continue,
                    _ => return,
                }
            };
            let (status, body) = match path.split('?').next() {
                Some("/metrics") => ("200 OK", board.render(unix_now())),
                Some("/") => (
                    "200 OK",
                    "leakcheck watch: the verdicts are at /metrics\n".to_string(),
                ),
                _ => ("404 Not Found", "not found: try /metrics\n".to_string()),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        });
    }
}
