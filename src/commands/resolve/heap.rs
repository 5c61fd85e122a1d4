//! `inspect`'s and `diff`'s settings.

use crate::cli::{DiffArgs, InspectArgs};
use crate::settings::{DiffProps, InspectProps};

impl InspectArgs {
    pub fn into_props(self) -> InspectProps {
        InspectProps {
            snapshot: self.snapshot,
            top: self.top,
            json: self.json,
            threads: self.threads,
        }
    }
}

impl DiffArgs {
    pub fn into_props(self) -> DiffProps {
        DiffProps {
            before: self.before,
            after: self.after,
            top: self.top,
            json: self.json,
            threads: self.threads,
        }
    }
}
