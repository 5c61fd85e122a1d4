//! A Chrome DevTools Protocol client over one WebSocket: numbered commands
//! matched to their responses, and events handed to whoever listens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// How long an ordinary command may take. A full collection of a large heap
/// takes seconds; snapshots use their own, longer bound.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum InspectorError {
    #[error("cannot open the inspector WebSocket {url}")]
    Connect {
        url: String,
        #[source]
        source: Box<tokio_tungstenite::tungstenite::Error>,
    },
    #[error(
        "the inspector connection closed (the target exited, or another debugger took the session)"
    )]
    Disconnected,
    #[error("the inspector answered {method} with an error: {message}")]
    Protocol { method: String, message: String },
    #[error("the inspector did not answer {method} within {seconds} s")]
    Timeout { method: String, seconds: u64 },
    #[error("evaluating `{expression}` in the target threw: {message}")]
    Evaluation { expression: String, message: String },
}

/// A protocol event, such as `HeapProfiler.addHeapSnapshotChunk`.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub params: Value,
}

type Reply = oneshot::Sender<Result<Value, InspectorError>>;

struct Command {
    method: String,
    params: Value,
    reply: Reply,
}

/// Where events go: nowhere until someone subscribes, so unread events
/// never pile up.
type EventSink = Arc<Mutex<Option<mpsc::UnboundedSender<Event>>>>;

pub struct Inspector {
    commands: mpsc::UnboundedSender<Command>,
    events: EventSink,
    pub url: String,
}

impl Inspector {
    pub async fn connect(url: &str) -> Result<Inspector, InspectorError> {
        let (socket, _) =
            tokio_tungstenite::connect_async(url)
                .await
                .map_err(|e| InspectorError::Connect {
                    url: url.to_string(),
                    source: Box::new(e),
                })?;
        let (commands, command_queue) = mpsc::unbounded_channel();
        let events: EventSink = Arc::new(Mutex::new(None));
        tokio::spawn(pump(socket, command_queue, events.clone()));
        Ok(Inspector {
            commands,
            events,
            url: url.to_string(),
        })
    }

    pub async fn call(&self, method: &str, params: Value) -> Result<Value, InspectorError> {
        self.call_within(method, params, COMMAND_TIMEOUT).await
    }

    pub async fn call_within(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, InspectorError> {
        let (reply, answer) = oneshot::channel();
        let command = Command {
            method: method.to_string(),
            params,
            reply,
        };
        self.commands
            .send(command)
            .map_err(|_| InspectorError::Disconnected)?;
        match tokio::time::timeout(limit, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(InspectorError::Disconnected),
            Err(_) => Err(InspectorError::Timeout {
                method: method.to_string(),
                seconds: limit.as_secs(),
            }),
        }
    }

    /// Evaluates an expression in the target and returns its value as JSON.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, InspectorError> {
        self.evaluate_with(expression, false).await
    }

    /// Like `evaluate`, with the console's command-line API in scope, which
    /// in Node includes `require` even when the target is an ES module.
    pub async fn evaluate_in_console(&self, expression: &str) -> Result<Value, InspectorError> {
        self.evaluate_with(expression, true).await
    }

    async fn evaluate_with(
        &self,
        expression: &str,
        command_line_api: bool,
    ) -> Result<Value, InspectorError> {
        let params = json!({
            "expression": expression,
            "returnByValue": true,
            "silent": true,
            "includeCommandLineAPI": command_line_api,
        });
        let result = self.call("Runtime.evaluate", params).await?;
        if let Some(details) = result.get("exceptionDetails") {
            let message = details
                .pointer("/exception/description")
                .or_else(|| details.get("text"))
                .and_then(Value::as_str)
                .unwrap_or("an exception")
                .to_string();
            return Err(InspectorError::Evaluation {
                expression: expression.to_string(),
                message,
            });
        }
        Ok(result
            .pointer("/result/value")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Receives the protocol events from now on (replacing any earlier
    /// subscriber). The channel ends when the connection does.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Event> {
        let (sink, events) = mpsc::unbounded_channel();
        *self.events.lock().expect("event sink lock") = Some(sink);
        events
    }
}

/// Owns the socket: writes queued commands, routes responses to their
/// callers and events to the event channel. When the socket ends, every
/// waiting caller gets `Disconnected` (their reply senders are dropped).
async fn pump<S>(
    socket: tokio_tungstenite::WebSocketStream<S>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: EventSink,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut write, mut read) = socket.split();
    let mut pending: HashMap<u64, (String, Reply)> = HashMap::new();
    let mut next_id: u64 = 1;
    loop {
        tokio::select! {
            // Incoming first: a snapshot's chunks must not wait behind commands.
            biased;
            message = read.next() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                let Ok(value) = serde_json::from_str::<Value>(&text) else { continue };
                route_message(value, &mut pending, &events);
            }
            command = commands.recv() => {
                let Some(command) = command else { break };
                let id = next_id;
                next_id += 1;
                let text = json!({ "id": id, "method": command.method, "params": command.params });
                if write.send(Message::text(text.to_string())).await.is_err() {
                    break;
                }
                pending.insert(id, (command.method, command.reply));
            }
        }
    }
    // Dropping the sink ends subscribers' channels.
    events.lock().expect("event sink lock").take();
}

fn route_message(
    mut value: Value,
    pending: &mut HashMap<u64, (String, Reply)>,
    events: &EventSink,
) {
    if let Some(id) = value.get("id").and_then(Value::as_u64) {
        let Some((method, reply)) = pending.remove(&id) else {
            return;
        };
        let result = match value.get_mut("error") {
            Some(error) => Err(InspectorError::Protocol {
                method,
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
            }),
            None => Ok(value
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null)),
        };
        let _ = reply.send(result);
    } else if let Some(method) = value.get("method").and_then(Value::as_str) {
        let method = method.to_string();
        let params = value
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        if let Some(sink) = events.lock().expect("event sink lock").as_ref() {
            let _ = sink.send(Event { method, params });
        }
    }
}
