//! The search: `git bisect`'s halving over an ordered list of candidates,
//! index 0 known clean and the last known to leak, with candidates that
//! cannot be judged skipped (a build that fails, an `inconclusive`).
//!
//! Each step checks the unjudged candidate nearest the middle of the open
//! range, so `n` candidates take about `log2(n)` steps; a skipped
//! candidate costs one more step, its neighbour being checked instead.
//! When only skipped candidates remain between the last clean and the
//! first leaking one, the answer is that range, as `git bisect` says
//! "the first bad commit could be any of".

use std::collections::BTreeSet;

pub use crate::model::Reading;

/// The open range of a search.
#[derive(Debug, Clone)]
pub struct Search {
    /// The latest candidate read clean.
    clean: usize,
    /// The earliest candidate read leaking.
    leak: usize,
    skipped: BTreeSet<usize>,
}

impl Search {
    /// A search over `count` candidates whose first reads clean and last
    /// leaks (both already checked).
    pub fn new(count: usize) -> Search {
        assert!(count >= 2, "a search needs its two ends");
        Search {
            clean: 0,
            leak: count - 1,
            skipped: BTreeSet::new(),
        }
    }

    /// The next candidate to check, or `None` once decided.
    pub fn next(&self) -> Option<usize> {
        let middle = (self.clean + self.leak) / 2;
        // Outward from the middle: middle, middle + 1, middle - 1, …
        (0..self.leak - self.clean)
            .flat_map(|d| [middle + d, middle.wrapping_sub(d)])
            .find(|&i| i > self.clean && i < self.leak && !self.skipped.contains(&i))
    }

    /// Records what candidate `index` read.
    pub fn record(&mut self, index: usize, reading: Reading) {
        match reading {
            Reading::Leak if index < self.leak => self.leak = index,
            Reading::Clean if index > self.clean => self.clean = index,
            Reading::Skip => {
                self.skipped.insert(index);
            }
            _ => {}
        }
    }

    /// The earliest candidate known to leak.
    pub fn first_leak(&self) -> usize {
        self.leak
    }

    /// The latest candidate known clean.
    pub fn last_clean(&self) -> usize {
        self.clean
    }

    /// The skipped candidates between the last clean and the first leaking
    /// one: any of them may be where the leak begins.
    pub fn undecided(&self) -> Vec<usize> {
        self.skipped
            .range(self.clean + 1..self.leak)
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search where candidates from `first_bad` on leak and
    /// `skip` cannot be judged; returns the answer and the steps taken.
    fn bisect(count: usize, first_bad: usize, skip: &[usize]) -> (usize, Vec<usize>, usize) {
        let mut search = Search::new(count);
        let mut steps = 0;
        while let Some(i) = search.next() {
            steps += 1;
            let reading = match (skip.contains(&i), i >= first_bad) {
                (true, _) => Reading::Skip,
                (false, true) => Reading::Leak,
                (false, false) => Reading::Clean,
            };
            search.record(i, reading);
        }
        (search.first_leak(), search.undecided(), steps)
    }

    #[test]
    fn sixteen_candidates_take_at_most_four_steps_wherever_the_leak_begins() {
        for first_bad in 1..16 {
            let (found, undecided, steps) = bisect(16, first_bad, &[]);
            assert_eq!(found, first_bad);
            assert!(undecided.is_empty());
            assert!(steps <= 4, "{first_bad}: {steps} steps");
        }
    }

    #[test]
    fn a_skipped_middle_costs_a_step_and_the_answer_stands() {
        let (found, undecided, steps) = bisect(16, 9, &[7]);
        assert_eq!((found, undecided), (9, vec![]));
        assert!(steps <= 5, "{steps}");
    }

    #[test]
    fn skips_next_to_the_boundary_leave_a_range() {
        // 8 leaks, 7 cannot be judged: the leak begins at 7 or 8.
        let (found, undecided, _) = bisect(16, 8, &[7]);
        assert_eq!((found, undecided), (8, vec![7]));
    }

    #[test]
    fn two_candidates_need_no_step() {
        assert_eq!(bisect(2, 1, &[]), (1, vec![], 0));
    }
}
