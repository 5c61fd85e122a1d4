//! Launchers in front of the app: `npm start`, `yarn dev`, `pnpm start`,
//! `npx`, and the runners that restart or transpile it in a child (`tsx`,
//! `nodemon`) are Node programs themselves, so with the inspector flag in
//! NODE_OPTIONS they announce an inspector of their own before the app
//! does. A command known by its port (`run`) picks the process
//! that serves it; one that is only watched (`watch -- npm start`) skips
//! the inspectors these announce, by the command line of the process that
//! listens on each.

use crate::platform::procfs;

/// The programs that start the app in a process of their own and only
/// wait for it. Their command line starts with one of these names, as a
/// title npm sets (`npm start`) or as the script Node runs
/// (`node /usr/lib/node_modules/pnpm/bin/pnpm.cjs start`,
/// `node node_modules/.bin/tsx server.ts`).
const LAUNCHERS: [&str; 16] = [
    "npm",
    "npx",
    "npm-cli.js",
    "npx-cli.js",
    "yarn",
    "yarn.js",
    "yarn.cjs",
    "pnpm",
    "pnpm.js",
    "pnpm.cjs",
    "pnpx",
    "corepack",
    "corepack.js",
    "tsx",
    "nodemon",
    "nodemon.js",
];

/// Whether the inspector listening on `port` belongs to a launcher's own
/// process. A port whose process cannot be read counts as the app's.
pub fn listens_for_a_launcher(port: u16) -> bool {
    procfs::holders_of(port)
        .iter()
        .any(|holder| is_launcher(&procfs::command_line(holder.pid)))
}

/// Whether a command line (words joined by spaces) runs a launcher: its
/// program, or the script a `node` program runs.
fn is_launcher(command_line: &str) -> bool {
    let mut words = command_line.split_whitespace().map(base_name);
    let Some(program) = words.next() else {
        return false;
    };
    let named = |word: &str| LAUNCHERS.contains(&word);
    if named(program) {
        return true;
    }
    let runs_node = program == "node" || program.starts_with("node-") || program == "nodejs";
    // The script is the first word that is not a flag of Node's.
    runs_node && words.find(|w| !w.starts_with('-')).is_some_and(named)
}

fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_are_told_from_the_apps_they_start() {
        for manager in [
            "npm start",
            "npm run dev",
            "node /usr/lib/node_modules/npm/bin/npm-cli.js start",
            "/usr/bin/node /usr/local/bin/yarn start",
            "node /usr/lib/node_modules/pnpm/bin/pnpm.cjs start",
            "npx next start",
            "node --inspect=127.0.0.1:0 /usr/lib/node_modules/corepack/dist/pnpm.js dev",
            "node /srv/app/node_modules/.bin/tsx watch src/server.ts",
            "node /usr/local/lib/node_modules/nodemon/bin/nodemon.js server.js",
        ] {
            assert!(is_launcher(manager), "{manager}");
        }
        for app in [
            "node server.js",
            "node --inspect=127.0.0.1:0 dist/main.js",
            "/usr/bin/node /srv/app/node_modules/.bin/next start",
            "node /srv/npm-stats/server.js",
            "",
        ] {
            assert!(!is_launcher(app), "{app}");
        }
    }
}
