//! Evaluation in WebKit's inspector protocol (Bun): the differences from
//! V8's are in `dialect.rs`'s table.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Inspector, InspectorError};

impl Inspector {
    /// WebKit's evaluation: a throw is `wasThrown`, and a promise is
    /// awaited by a second command on the object the first returned (the
    /// expression is wrapped in `Promise.resolve` so that it is evaluated
    /// once, promise or not).
    pub(super) async fn evaluate_webkit(
        &self,
        expression: &str,
        await_promise: bool,
        limit: Duration,
    ) -> Result<Value, InspectorError> {
        let wrapped;
        let source = if await_promise {
            wrapped = format!("Promise.resolve(({expression}))");
            wrapped.as_str()
        } else {
            expression
        };
        let params = json!({
            "expression": source,
            "returnByValue": !await_promise,
            "doNotPauseOnExceptionsAndMuteConsole": true,
        });
        let mut answer = self.call_within("Runtime.evaluate", params, limit).await?;
        let thrown =
            |answer: &Value| answer.get("wasThrown").and_then(Value::as_bool) == Some(true);
        if await_promise && !thrown(&answer) {
            let id = answer
                .pointer("/result/objectId")
                .cloned()
                .unwrap_or(Value::Null);
            let params = json!({ "promiseObjectId": id, "returnByValue": true });
            answer = self
                .call_within("Runtime.awaitPromise", params, limit)
                .await?;
        }
        let message = thrown(&answer).then(|| {
            answer
                .pointer("/result/description")
                .and_then(Value::as_str)
                .unwrap_or("an exception")
        });
        super::client::evaluated(expression, &answer, message)
    }
}
