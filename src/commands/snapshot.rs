//! `leakcheck snapshot`: stream a heap snapshot from a running Node process
//! straight to a private file (mode 0600, written aside and renamed: see
//! `private_file.rs`).

use std::time::Instant;

use crate::settings::SnapshotProps;
use std::io::Write;

use crate::inspector::snapshot::stream_snapshot_chunks;
use crate::private_file::PrivateFile;

use crate::session::attach::connect_inspector;

pub async fn run(props: SnapshotProps) -> anyhow::Result<()> {
    let inspector = connect_inspector(&props.attach, props.allow_remote_inspector).await?;
    if props.gc {
        inspector.collect_garbage().await?;
    }
    let cannot = |e: std::io::Error| {
        anyhow::anyhow!(
            "cannot write {}: {e}; check the directory exists and is writable",
            props.output.display()
        )
    };
    let mut file = PrivateFile::create(&props.output).map_err(cannot)?;
    eprintln!("taking a heap snapshot: the target is paused while V8 writes it");
    let started = Instant::now();
    let bytes = stream_snapshot_chunks(&inspector, |chunk| file.file().write_all(chunk)).await?;
    file.persist().map_err(cannot)?;
    crate::report::to_stdout(&format!(
        "{}: {:.1} MB in {:.2} s\n",
        props.output.display(),
        bytes as f64 / crate::units::MB,
        started.elapsed().as_secs_f64()
    ))?;
    Ok(())
}
