//! Tests of the engine on tiny snapshots written by hand, where the right
//! answer is known: field order from meta, dominators of a diamond and a
//! chain, weak edges, nodes only weakly held, errors with byte offsets.

use super::*;

/// A snapshot with node fields in a non-V8 order (id first) to prove the
/// parser reads the layout from meta. Nodes: 0 root, 1 a, 2 b, 3 c, 4 d, 5 w.
/// Edges: root→a, root→b (property), a→c, b→c (diamond), c→d (chain),
/// root→w weak only. Self sizes: a 10, b 20, c 30, d 40, w 50.
const TINY: &str = r#"{"snapshot":{"meta":{
 "node_fields":["id","type","name","self_size","edge_count"],
 "node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic"],"string","number","number","number"],
 "edge_fields":["type","name_or_index","to_node"],
 "edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]},
 "node_count":6,"edge_count":6},
"nodes":[1,9,0,0,3, 3,3,1,10,1, 5,3,2,20,1, 7,3,3,30,1, 9,3,4,40,0, 11,3,5,50,0],
"edges":[2,6,5, 2,7,10, 6,8,25, 2,9,15, 2,9,15, 2,10,20],
"strings":["","A","B","C","D","W","a","b","w","c","d"]}"#;

fn tiny() -> Analysis {
    analyse(TINY.as_bytes()).unwrap()
}

fn node_by_name(a: &Analysis, name: &str) -> NodeId {
    a.graph.nodes().find(|n| a.graph.name(*n) == name).unwrap()
}

#[test]
fn reads_layout_from_meta() {
    let a = tiny();
    assert_eq!(a.graph.node_count(), 6);
    assert_eq!(a.graph.edge_count(), 6);
    let c = node_by_name(&a, "C");
    assert_eq!(a.graph.id(c), 7);
    assert_eq!(a.graph.self_size(c), 30);
    assert_eq!(a.graph.node_type(c), NodeType::Object);
}

#[test]
fn diamond_and_chain_dominators_and_retained_sizes() {
    let a = tiny();
    let [root, na, nb, c, d] = ["", "A", "B", "C", "D"].map(|n| node_by_name(&a, n));
    assert_eq!(
        a.dominators.idom(c),
        root,
        "two paths into C: only the root dominates it"
    );
    assert_eq!(a.dominators.idom(d), c);
    assert_eq!(a.dominators.idom(na), root);
    assert_eq!(a.dominators.retained(c), 70);
    assert_eq!(a.dominators.retained(na), 10);
    assert_eq!(a.dominators.retained(nb), 20);
    assert_eq!(
        a.dominators.retained(root),
        150,
        "everything, the weakly held W included"
    );
}

#[test]
fn weak_edges_do_not_retain_and_weakly_held_nodes_hang_off_the_root() {
    let a = tiny();
    let w = node_by_name(&a, "W");
    assert!(!a.paths.reachable(w));
    assert_eq!(a.dominators.idom(w), NodeId::ROOT);
    assert!(
        a.graph.edges_into(w).is_empty(),
        "only a weak edge points at W"
    );
}

#[test]
fn paths_are_shortest_and_named() {
    let a = tiny();
    let d = node_by_name(&a, "D");
    let steps = a.paths.path_to(&a.graph, d);
    let names: Vec<String> = steps.iter().map(|s| a.graph.edge_name(s.edge)).collect();
    assert_eq!(names, ["a", "c", "d"]);
    assert_eq!(a.paths.distances.of(d), 3);
}

#[test]
fn truncation_names_the_byte_offset() {
    let cut = &TINY[..TINY.find("\"edges\"").unwrap() + 20];
    let error = analyse(cut.as_bytes()).err().unwrap().to_string();
    assert!(error.contains(&format!("byte {}", cut.len())), "{error}");
    assert!(error.contains("truncated"), "{error}");
}

#[test]
fn garbage_is_refused_with_an_offset() {
    let error = analyse("not json".as_bytes()).err().unwrap().to_string();
    assert!(error.contains("at byte 0"), "{error}");
    let error = analyse(r#"{"nodes":[1,2]}"#.as_bytes())
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("\"snapshot\""), "{error}");
    let bad_target = TINY.replace("2,10,20]", "2,10,21]");
    let error = analyse(bad_target.as_bytes()).err().unwrap().to_string();
    assert!(error.contains("not the start of a node"), "{error}");
    let bad_count = TINY.replace("\"edges\":[2,6,5, ", "\"edges\":[");
    assert!(analyse(bad_count.as_bytes()).is_err());
}

#[test]
fn escapes_and_surrogates_in_strings() {
    let text = TINY.replace(r#""W","a""#, r#""W\u00e9\ud83d\ude00\n","a""#);
    let a = analyse(text.as_bytes()).unwrap();
    assert!(a.graph.nodes().any(|n| a.graph.name(n) == "Wé😀\n"));
}

#[test]
fn any_prefix_errors_instead_of_panicking() {
    for end in 0..TINY.len() {
        if TINY.is_char_boundary(end) {
            let _ = analyse(&TINY.as_bytes()[..end]);
        }
    }
}

/// Root → Holder by element [3]; Holder → two strings by property `text`.
/// String 3 ("hello") is only a string's value (and an element's index,
/// which names nothing); string 2 ("text") is also a property's name.
const VALUES: &str = r#"{"snapshot":{"meta":{
 "node_fields":["type","name","id","self_size","edge_count"],
 "node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic"],"string","number","number","number"],
 "edge_fields":["type","name_or_index","to_node"],
 "edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]},
 "node_count":4,"edge_count":3},
"nodes":[9,0,1,0,1, 3,1,3,16,2, 2,3,5,24,0, 2,2,7,20,0],
"edges":[1,3,5, 2,2,10, 2,2,15],
"strings":["","Holder","text","hello"]}"#;

#[test]
fn only_shown_strings_empties_string_values_and_keeps_every_id() {
    for threads in [1, 2] {
        let options = |only_shown_strings| ParseOptions {
            threads,
            only_shown_strings,
            ..ParseOptions::default()
        };
        let all = parse_with(VALUES.as_bytes(), None, options(false)).unwrap();
        let shown = parse_with(VALUES.as_bytes(), None, options(true)).unwrap();
        let [holder, hello, text] = [1, 2, 3].map(NodeId);
        assert_eq!(all.name(hello), "hello");
        assert_eq!(shown.name(hello), "", "a string's value only");
        assert_eq!(shown.name(text), "text", "also a property's name");
        assert_eq!(shown.name(holder), "Holder");
        assert_eq!(shown.strings.len(), all.strings.len());
        let names = |g: &HeapGraph| -> Vec<String> {
            g.edges(holder)
                .map(|e| g.edge_name_str(e).unwrap_or_default().to_string())
                .collect()
        };
        assert_eq!(names(&shown), ["text", "text"]);
    }
}
