//! The attach flags, and `sample`'s and `snapshot`'s settings.

use super::run::parse_counters;
use crate::cli::{AttachArgs, SampleArgs, SnapshotArgs};
use crate::settings::{Attach, SampleProps, SnapshotProps};

impl AttachArgs {
    pub fn choice(&self) -> Option<Attach> {
        let this = &self.choice;
        if let Some(spec) = &this.inspect {
            Some(Attach::Inspect(spec.clone()))
        } else if let Some(pid) = this.pid {
            Some(Attach::Pid(pid))
        } else if let Some(base) = &this.endpoints {
            Some(Attach::Endpoints(base.clone()))
        } else {
            this.proc_pid.map(Attach::Proc)
        }
    }
}

impl SampleArgs {
    pub fn into_props(self) -> anyhow::Result<SampleProps> {
        let attach = self.attach.choice().ok_or_else(|| {
            anyhow::anyhow!("say which process to read: --inspect HOST:PORT, --pid PID, --endpoints URL or --proc PID")
        })?;
        Ok(SampleProps {
            attach,
            url: self.url,
            gc: self.gc,
            counters: parse_counters(&self.counters)?,
            json: self.json,
            allow_remote_inspector: self.attach.allow_remote_inspector,
        })
    }
}

impl SnapshotArgs {
    pub fn into_props(self) -> anyhow::Result<SnapshotProps> {
        let attach = match self.attach.choice() {
            Some(a @ (Attach::Inspect(_) | Attach::Pid(_))) => a,
            _ => anyhow::bail!(
                "a snapshot needs the inspector: give --inspect HOST:PORT or --pid PID"
            ),
        };
        Ok(SnapshotProps {
            attach,
            output: self.output,
            gc: self.gc,
            allow_remote_inspector: self.attach.allow_remote_inspector,
        })
    }
}
