//! The holders' tally on a linked list that grew by one link a request
//! (`list = { prev: list }`), the chain where each new link dominates the
//! older ones: the holder is the old object whose slot keeps the newest
//! link, and each link is climbed through a bounded number of times, not
//! once per newer link.

use super::*;
use crate::snapshot::{Before, parse};

/// A snapshot of the root, an object `Holder` whose property `list` keeps
/// the newest of `links` links, and links `Object {prev}` each keeping the
/// one before (the first keeps nothing). Node ids are stable: link `k` is
/// id 5 + 2k in every snapshot, so a pair shares the older links.
fn chain_snapshot(links: u32) -> String {
    const FIELDS: u32 = 5;
    // Nodes: root 0, holder 1, link k at 2 + k.
    let mut nodes = vec!["9,1,1,0,1".to_string(), "3,2,3,16,1".to_string()];
    let mut edges = vec![
        format!("2,3,{}", FIELDS),
        format!("2,4,{}", FIELDS * (links + 1)),
    ];
    for k in 0..links {
        let has_prev = k > 0;
        nodes.push(format!("3,0,{},40,{}", 5 + 2 * k, u32::from(has_prev)));
        if has_prev {
            edges.push(format!("2,5,{}", FIELDS * (k + 1)));
        }
    }
    format!(
        r#"{{"snapshot":{{"meta":{{
 "node_fields":["type","name","id","self_size","edge_count"],
 "node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic"],"string","number","number","number"],
 "edge_fields":["type","name_or_index","to_node"],
 "edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]}},
 "node_count":{},"edge_count":{}}},
"nodes":[{}],
"edges":[{}],
"strings":["Object","","Holder","h","list","prev"]}}"#,
        nodes.len(),
        edges.len(),
        nodes.join(","),
        edges.join(",")
    )
}

#[test]
fn a_grown_chain_is_held_by_the_old_object_and_each_link_climbed_a_bounded_number_of_times() {
    const OLD_LINKS: u32 = 3;
    const LINKS: u32 = 3_000;
    let before = Before::summarise(parse(chain_snapshot(OLD_LINKS).as_bytes()).unwrap());
    let mut graph = parse(chain_snapshot(LINKS).as_bytes()).unwrap();
    let retainers = graph.take_retainers();
    let dominators = Dominators::compute(&graph, retainers);
    let classes = ClassIndex::build(&graph);
    let new = crate::snapshot::new_nodes(&before, &graph, &classes);
    let mut scratch = HolderScratch::new(&graph);

    let found = tally_holders(
        &graph,
        &dominators,
        &classes,
        &new,
        "Object {prev}",
        1,
        &mut scratch,
    );

    assert_eq!(found.len(), 1);
    let holder = &found[0];
    assert_eq!(graph.name(holder.node), "Holder");
    assert_eq!(holder.objects, u64::from(LINKS - OLD_LINKS));
    assert_eq!(holder.new_bytes, 40 * u64::from(LINKS - OLD_LINKS));
    let slot = holder.slot.expect("the holder's slot keeps every new link");
    assert_eq!(graph.edge_name_str(slot), Some("list"));
    let new_links = (LINKS - OLD_LINKS) as usize;
    assert!(
        scratch.steps <= (PLAIN_STEPS + 2) * new_links,
        "{} steps climbed for {new_links} new links",
        scratch.steps
    );
}
