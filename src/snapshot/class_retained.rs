//! The retained size of each class, on several threads.
//!
//! A class retains what its members retain, less what a member retains
//! inside another member (DevTools' definition): a member counts unless a
//! dominator-tree ancestor is of its class. One walk down the tree with a
//! count of the classes on the path decides it; this module splits that
//! walk between threads.
//!
//! The top of the tree is walked first on the calling thread: a node
//! retaining more than `1 / (threads × PIECES_PER_THREAD)` of the heap is
//! "opened" (counted here, its children looked at in turn), a lighter child
//! becomes part of a task, grouped with its light siblings up to that
//! weight. A task carries the classes of its roots' ancestors (the path
//! from the root, never longer than `MAX_OPEN_DEPTH`), so any thread can
//! walk it. Tasks go to threads largest first, each to the least loaded
//! (LPT scheduling); retained bytes stand in for the work, which is the
//! nodes walked. The sums do not depend on the split: one thread or many
//! give the same figures.

use super::dominators::Dominators;
use super::graph::NodeId;

/// Tasks per thread the heap is cut into: enough to even out the threads'
/// loads, few enough that the ancestors copied into tasks cost nothing.
const PIECES_PER_THREAD: u64 = 8;
/// Below this depth no node is opened: its subtree is one task, however
/// heavy (a long list's spine would otherwise be opened node by node).
const MAX_OPEN_DEPTH: usize = 64;

/// Subtrees of the dominator tree, walked by one thread.
struct Task {
    /// Classes of the roots' strict ancestors, root first.
    ancestors: Vec<u32>,
    roots: Vec<NodeId>,
    /// Bytes retained under the roots: the task's expected work.
    weight: u64,
}

/// Retained bytes of each of `classes` classes; `class_of[n]` is node
/// `n`'s class.
pub fn retained_by_class(
    doms: &Dominators,
    children: &Children,
    class_of: &[u32],
    classes: usize,
    threads: usize,
) -> Vec<u64> {
    let threads = threads.max(1);
    let limit = (doms.retained(NodeId::ROOT) / (threads as u64 * PIECES_PER_THREAD)).max(1);
    let mut top = Top {
        doms,
        children,
        class_of,
        limit,
        totals: vec![0u64; classes],
        path: Vec::new(),
        tasks: Vec::new(),
    };
    top.open(NodeId::ROOT);
    let Top {
        mut totals, tasks, ..
    } = top;
    let shares = schedule(tasks, threads);
    let sums: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let walkers: Vec<_> = shares
            .into_iter()
            .map(|share| scope.spawn(move || walk(doms, children, class_of, classes, &share)))
            .collect();
        walkers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for sum in sums {
        for (total, part) in totals.iter_mut().zip(sum) {
            *total += part;
        }
    }
    totals
}

/// The walk of the tree's top, on the calling thread.
struct Top<'a> {
    doms: &'a Dominators,
    children: &'a Children,
    class_of: &'a [u32],
    /// Retained bytes above which a node is opened.
    limit: u64,
    totals: Vec<u64>,
    /// Classes of the opened nodes from the root down to the current one.
    path: Vec<u32>,
    tasks: Vec<Task>,
}

impl Top<'_> {
    /// Counts `node` (its ancestors are on `path`), then opens its heavy
    /// children and puts the light ones into tasks. Recursion is bounded
    /// by `MAX_OPEN_DEPTH`.
    fn open(&mut self, node: NodeId) {
        let class = self.class_of[node.index()];
        if !self.path.contains(&class) {
            self.totals[class as usize] += self.doms.retained(node);
        }
        self.path.push(class);
        let mut batch = self.task();
        for &child in self.children.of(node) {
            let weight = self.doms.retained(child);
            if weight > self.limit && self.path.len() < MAX_OPEN_DEPTH {
                self.open(child);
                continue;
            }
            batch.roots.push(child);
            batch.weight += weight;
            if batch.weight >= self.limit {
                let full = std::mem::replace(&mut batch, self.task());
                self.tasks.push(full);
            }
        }
        if !batch.roots.is_empty() {
            self.tasks.push(batch);
        }
        self.path.pop();
    }

    fn task(&self) -> Task {
        Task {
            ancestors: self.path.clone(),
            roots: Vec::new(),
            weight: 0,
        }
    }
}

/// The tasks of each thread: largest first, each to the least loaded.
fn schedule(mut tasks: Vec<Task>, threads: usize) -> Vec<Vec<Task>> {
    tasks.sort_by_key(|t| std::cmp::Reverse(t.weight));
    let mut shares: Vec<(u64, Vec<Task>)> = (0..threads).map(|_| (0, Vec::new())).collect();
    for task in tasks {
        let lightest = shares
            .iter_mut()
            .min_by_key(|(load, _)| *load)
            .expect("at least one thread");
        lightest.0 += task.weight;
        lightest.1.push(task);
    }
    shares.into_iter().map(|(_, share)| share).collect()
}

/// Walks a thread's tasks: retained bytes per class of the members no
/// ancestor of the same class dominates.
fn walk(
    doms: &Dominators,
    children: &Children,
    class_of: &[u32],
    classes: usize,
    tasks: &[Task],
) -> Vec<u64> {
    let mut totals = vec![0u64; classes];
    // How many nodes of each class are on the path to the current node.
    let mut active = vec![0u32; classes];
    let mut stack: Vec<(NodeId, bool)> = Vec::new();
    for task in tasks {
        for &class in &task.ancestors {
            active[class as usize] += 1;
        }
        stack.extend(task.roots.iter().map(|&root| (root, false)));
        while let Some((node, leaving)) = stack.pop() {
            let class = class_of[node.index()] as usize;
            if leaving {
                active[class] -= 1;
                continue;
            }
            if active[class] == 0 {
                totals[class] += doms.retained(node);
            }
            active[class] += 1;
            stack.push((node, true));
            stack.extend(children.of(node).iter().map(|&child| (child, false)));
        }
        for &class in &task.ancestors {
            active[class as usize] -= 1;
        }
    }
    totals
}

/// The dominator tree as CSR child lists.
pub struct Children {
    first: Vec<u32>,
    list: Vec<NodeId>,
}

impl Children {
    pub fn of(&self, n: NodeId) -> &[NodeId] {
        &self.list[self.first[n.index()] as usize..self.first[n.index() + 1] as usize]
    }
}

pub fn dominator_children(doms: &Dominators) -> Children {
    let n = doms.idom.len();
    // Counts per dominator, summed into the end of each one's range; the
    // children are then placed from the back, so each range ends up in
    // ascending order and `first[d]` at its start (one array fewer than
    // counting and filling forward).
    let mut first = vec![0u32; n + 1];
    for d in doms.idom.iter().skip(1) {
        first[d.index()] += 1;
    }
    let mut sum = 0;
    for f in &mut first {
        sum += *f;
        *f = sum;
    }
    let mut list = vec![NodeId::ROOT; n.saturating_sub(1)];
    for (i, d) in doms.idom.iter().enumerate().skip(1).rev() {
        first[d.index()] -= 1;
        list[first[d.index()] as usize] = NodeId(i as u32);
    }
    Children { first, list }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition itself: a node counts unless a strict ancestor is of
    /// its class (climbing the tree from every node).
    fn by_definition(doms: &Dominators, class_of: &[u32], classes: usize) -> Vec<u64> {
        let mut totals = vec![0u64; classes];
        for n in 0..doms.idom.len() {
            let class = class_of[n];
            let mut at = NodeId(n as u32);
            let mut covered = false;
            while at != NodeId::ROOT {
                at = doms.idom[at.index()];
                covered |= class_of[at.index()] == class;
            }
            if !covered {
                totals[class as usize] += doms.retained[n];
            }
        }
        totals
    }

    /// A tree of `n` nodes from a small generator: each node's dominator
    /// is an earlier node, some wide fans, some long chains.
    fn tree(n: usize, seed: u64) -> (Dominators, Vec<u32>) {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut idom = vec![NodeId::ROOT; n];
        for (v, slot) in idom.iter_mut().enumerate().skip(1) {
            let r = next();
            *slot = NodeId(match r % 4 {
                0 => v as u32 - 1,
                1 => 0,
                _ => (r % v as u64) as u32,
            });
        }
        let class_of: Vec<u32> = (0..n).map(|_| (next() % 5) as u32).collect();
        let mut retained: Vec<u64> = (0..n).map(|_| 1 + next() % 100).collect();
        for v in (1..n).rev() {
            retained[idom[v].index()] += retained[v];
        }
        (Dominators { idom, retained }, class_of)
    }

    #[test]
    fn any_split_gives_the_definitions_figures() {
        for (n, seed) in [(1, 1), (2, 2), (50, 3), (3000, 4), (3000, 5)] {
            let (doms, class_of) = tree(n, seed);
            let children = dominator_children(&doms);
            let expected = by_definition(&doms, &class_of, 5);
            for threads in [1, 2, 3, 16] {
                let got = retained_by_class(&doms, &children, &class_of, 5, threads);
                assert_eq!(got, expected, "{n} nodes, {threads} threads");
            }
        }
    }

    #[test]
    fn a_heavy_node_is_opened_and_its_children_shared() {
        // The root holds one child that holds everything in a fan.
        let n = 1000;
        let mut idom = vec![NodeId(1); n];
        idom[0] = NodeId::ROOT;
        idom[1] = NodeId::ROOT;
        let mut retained = vec![1u64; n];
        retained[1] = (n - 1) as u64;
        retained[0] = n as u64;
        let doms = Dominators { idom, retained };
        let class_of = vec![0u32; n];
        let children = dominator_children(&doms);
        let limit = n as u64 / (2 * PIECES_PER_THREAD);
        let mut top = Top {
            doms: &doms,
            children: &children,
            class_of: &class_of,
            limit,
            totals: vec![0; 1],
            path: Vec::new(),
            tasks: Vec::new(),
        };
        top.open(NodeId::ROOT);
        let shares = schedule(top.tasks, 2);
        let loads: Vec<u64> = shares
            .iter()
            .map(|s| s.iter().map(|t| t.weight).sum())
            .collect();
        assert!(loads.iter().all(|l| *l >= 400), "{loads:?}");
        assert_eq!(
            retained_by_class(&doms, &children, &class_of, 1, 2),
            vec![n as u64]
        );
    }
}
