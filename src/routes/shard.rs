//! `--shard I/N`: which of a run's routes this runner checks, so that a CI
//! job matrix of N runners checks every route once, and `leakcheck report
//! --merge` puts the N results back together.
//!
//! Every runner finds the same routes (the same app, the same discovery)
//! and computes the same split with no word to the others, so the rule
//! must be a function of what each sees alike:
//!
//! 1. Each route gets a weight from its first requests' pace, in classes
//!    rather than the raw figure, since two runners measure a route a
//!    little differently: `LIGHT` (paced under 20 ms a request, or not
//!    measured: a `--route` list), `MEDIUM` (under 200 ms) and `HEAVY`.
//!    A clean route's check costs its requests at its pace, so the class
//!    is its time's order of magnitude.
//! 2. The routes are ordered by a hash of their name (FNV-1a), so a new
//!    route lands anywhere in the order, not at its end.
//! 3. The order is cut into N contiguous stretches of equal weight: a
//!    route belongs to the shard its weight's midpoint falls in.
//!
//! Stable when a route is added or removed: only the cumulative weight
//! after it shifts, by one route's weight, so at most one route crosses
//! each boundary between shards (N − 1 routes at most move). Should two
//! runners still disagree on a route's class, the merge finds the route
//! checked twice or by no one and says so.

/// Pace thresholds of the weight classes, seconds per request.
const MEDIUM_FROM_S: f64 = 0.020;
const HEAVY_FROM_S: f64 = 0.200;
/// The classes' weights: each a tenfold pace step, rounded to powers of 4.
const LIGHT: u64 = 1;
const MEDIUM: u64 = 4;
const HEAVY: u64 = 16;

/// `--shard I/N`, with I counted from 1 as CI matrices count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard, String> {
        let wrong = || format!("--shard {text}: give I/N with 1 ≤ I ≤ N (`2/4`)");
        let (index, count) = text.split_once('/').ok_or_else(wrong)?;
        let index: u32 = index.trim().parse().map_err(|_| wrong())?;
        let count: u32 = count.trim().parse().map_err(|_| wrong())?;
        if index == 0 || count == 0 || index > count {
            return Err(wrong());
        }
        Ok(Shard { index, count })
    }
}

/// The weight of a route paced at `seconds_per_request` (`None`: not
/// measured).
pub fn weight(seconds_per_request: Option<f64>) -> u64 {
    match seconds_per_request {
        Some(s) if s >= HEAVY_FROM_S => HEAVY,
        Some(s) if s >= MEDIUM_FROM_S => MEDIUM,
        _ => LIGHT,
    }
}

/// The shard (1-based) of each route, in the routes' given order.
pub fn assign(routes: &[(String, Option<f64>)], count: u32) -> Vec<u32> {
    let mut order: Vec<usize> = (0..routes.len()).collect();
    order.sort_by_key(|&i| (fnv1a(&routes[i].0), i));
    let total: u64 = routes.iter().map(|(_, pace)| weight(*pace)).sum();
    let mut shards = vec![0; routes.len()];
    let mut before = 0u64;
    for i in order {
        let w = weight(routes[i].1);
        // Twice the midpoint, to stay in integers: (before + w/2) / total × N.
        let at = (2 * before + w) * u64::from(count) / (2 * total.max(1));
        shards[i] = at.min(u64::from(count) - 1) as u32 + 1;
        before += w;
    }
    shards
}

/// The routes of each shard (shard 1 first), each in the routes' order.
pub fn split(routes: &[(String, Option<f64>)], count: u32) -> Vec<Vec<String>> {
    let mut shards = vec![Vec::new(); count as usize];
    for ((name, _), shard) in routes.iter().zip(assign(routes, count)) {
        shards[shard as usize - 1].push(name.clone());
    }
    shards
}

/// FNV-1a, 64 bits: a fixed hash every runner computes alike (std's
/// `DefaultHasher` makes no promise across Rust releases).
fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(n: usize) -> Vec<(String, Option<f64>)> {
        (0..n).map(|i| (format!("/route-{i}"), None)).collect()
    }

    fn weights_per_shard(routes: &[(String, Option<f64>)], count: u32) -> Vec<u64> {
        let shards = assign(routes, count);
        let mut sums = vec![0; count as usize];
        for (route, shard) in routes.iter().zip(shards) {
            sums[shard as usize - 1] += weight(route.1);
        }
        sums
    }

    #[test]
    fn the_shard_parses_as_ci_matrices_count_it() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for wrong in ["0/4", "5/4", "4", "a/b", "1/0"] {
            assert!(Shard::parse(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn every_route_has_one_shard_and_light_routes_split_evenly() {
        let routes = routes(12);
        let shards = assign(&routes, 3);
        assert!(shards.iter().all(|s| (1..=3).contains(s)));
        assert_eq!(weights_per_shard(&routes, 3), vec![4, 4, 4]);
        assert_eq!(weights_per_shard(&routes, 1), vec![12]);
    }

    #[test]
    fn heavy_routes_are_spread_by_weight_not_by_count() {
        let mut routes = routes(12);
        for route in routes.iter_mut().take(3) {
            route.1 = Some(0.5);
        }
        // 3 heavy (16 each) and 9 light: 57 in all, 19 a shard at best.
        let sums = weights_per_shard(&routes, 3);
        let most = *sums.iter().max().unwrap();
        assert!(most <= 19 + 16, "{sums:?}");
        let heavy_shards: Vec<u32> = assign(&routes, 3)[..3].to_vec();
        let mut distinct = heavy_shards.clone();
        distinct.dedup();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() >= 2, "{heavy_shards:?}");
    }

    #[test]
    fn split_gives_each_shard_its_routes_in_the_given_order() {
        let routes = routes(12);
        let shards = split(&routes, 3);
        let owner = assign(&routes, 3);
        for (index, shard) in shards.iter().enumerate() {
            let expected: Vec<String> = routes
                .iter()
                .zip(&owner)
                .filter(|(_, s)| **s as usize == index + 1)
                .map(|(r, _)| r.0.clone())
                .collect();
            assert_eq!(*shard, expected);
        }
    }

    #[test]
    fn a_route_added_moves_at_most_one_route_per_boundary() {
        let before = routes(30);
        let mut after = before.clone();
        after.push(("/a-new-route".into(), None));
        let (old, new) = (assign(&before, 4), assign(&after, 4));
        let moved = old.iter().zip(&new).filter(|(a, b)| a != b).count();
        assert!(moved <= 3, "{moved} routes moved");
    }

    #[test]
    fn the_split_is_the_same_whatever_order_the_routes_come_in() {
        let routes = routes(20);
        let mut reversed = routes.clone();
        reversed.reverse();
        let forward = assign(&routes, 4);
        let mut backward = assign(&reversed, 4);
        backward.reverse();
        assert_eq!(forward, backward);
    }
}
