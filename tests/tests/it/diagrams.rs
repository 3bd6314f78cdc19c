//! The book's pictures: every committed SVG is exactly what its source renders to, and the
//! source format refuses bad input by line.

use std::collections::BTreeSet;
use std::path::Path;

use retrykey_tests::diagrams::{self, Body, ParseError, parse, svg::escape};

const REGENERATE: &str = "just diagrams";

fn name(path: &Path) -> String {
    path.strip_prefix(retrykey_tests::workspace_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn sources() -> Vec<std::path::PathBuf> {
    let found = diagrams::sources(&diagrams::diagrams_dir()).expect("the diagrams folder reads");
    assert!(!found.is_empty(), "no diagram sources in docs/src/diagrams");
    found
}

#[test]
fn committed_svgs_match_their_sources() {
    // Requirement: each committed SVG is byte for byte what its source renders to today.
    let mut stale = Vec::new();
    for source in sources() {
        let text = retrykey_tests::read(&source).expect("the source reads");
        let diagram = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", name(&source)));
        let target = source.with_extension("svg");
        match std::fs::read_to_string(&target) {
            Ok(committed) if committed == diagram.render() => {}
            Ok(_) => stale.push(format!("{} is stale", name(&target))),
            Err(_) => stale.push(format!("{} is missing", name(&target))),
        }
    }
    assert!(
        stale.is_empty(),
        "{}; run `{REGENERATE}` and commit the result",
        stale.join("; ")
    );
}

#[test]
fn every_svg_has_a_source() {
    // Requirement: no picture in docs/src/diagrams is left without the source that makes it.
    let dir = diagrams::diagrams_dir();
    let sources: BTreeSet<_> = sources().into_iter().collect();
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the diagrams folder reads") {
        let path = entry.expect("an entry reads").path();
        if path.extension().is_some_and(|e| e == "svg")
            && !sources.contains(&path.with_extension("diag"))
        {
            orphans.push(name(&path));
        }
    }
    assert!(
        orphans.is_empty(),
        "SVGs without a .diag source: {orphans:?}"
    );
}

#[test]
fn every_chapter_embeds_a_diagram_that_exists() {
    // Requirement: each chapter shows at least one picture, and every picture it names exists.
    let src = retrykey_tests::workspace_root().join("docs/src");
    let mut chapters: Vec<_> = std::fs::read_dir(&src)
        .expect("docs/src reads")
        .map(|e| e.expect("an entry reads").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("ch"))
        })
        .collect();
    chapters.sort();
    assert!(!chapters.is_empty());
    for chapter in chapters {
        let text = retrykey_tests::read(&chapter).expect("the chapter reads");
        let images: Vec<&str> = text
            .split("](diagrams/")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
            .collect();
        assert!(!images.is_empty(), "{} embeds no diagram", name(&chapter));
        for image in images {
            assert!(
                src.join("diagrams").join(image).is_file(),
                "{} embeds diagrams/{image}, which does not exist",
                name(&chapter)
            );
        }
    }
}

#[test]
fn every_label_of_a_source_appears_in_its_svg() {
    // Requirement: the picture carries every text its source gives, escaped for SVG.
    for source in sources() {
        let diagram = parse(&retrykey_tests::read(&source).expect("reads")).expect("parses");
        let svg = diagram.render();
        assert!(svg.contains(&format!(
            "<title id=\"title\">{}</title>",
            escape(&diagram.title)
        )));
        assert!(svg.contains(&format!(
            "<desc id=\"desc\">{}</desc>",
            escape(&diagram.desc)
        )));
        for label in diagram.labels() {
            assert!(
                svg.contains(&escape(&label)),
                "{}: `{label}` is not in the SVG",
                name(&source)
            );
        }
    }
}

#[test]
fn jitter_windows_are_the_clients_ceilings() {
    // Requirement: the chapter 3 picture shows the ceilings the client really uses.
    let path = diagrams::diagrams_dir().join("ch03-jitter-window.diag");
    let diagram = parse(&retrykey_tests::read(&path).expect("reads")).expect("parses");
    let Body::Bars(bars) = diagram.body else {
        panic!("the jitter window is a bars diagram");
    };
    let policy = retrykey_client::Policy::default();
    let windows = bars.windows();
    assert!(
        windows.len() >= 2,
        "at least the default policy's two retries"
    );
    for (label, end) in windows {
        let retry: u32 = label
            .strip_prefix("retry ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("row `{label}` is not `retry N`"));
        let ceiling = retrykey_client::backoff::ceiling(&policy, retry).as_millis() as f64;
        assert_eq!(end, ceiling, "retry {retry}: window ends at {end} ms");
    }
}

#[test]
fn rendering_is_deterministic_and_self_contained() {
    // Requirement: the same source gives the same bytes, with a viewBox and nothing fetched.
    for source in sources() {
        let diagram = parse(&retrykey_tests::read(&source).expect("reads")).expect("parses");
        let svg = diagram.render();
        assert_eq!(svg, diagram.render());
        assert!(svg.contains("viewBox=\"0 0 "));
        let without_namespace = svg.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        for outside in ["http:", "https:", "@import", "<style", "href="] {
            assert!(
                !without_namespace.contains(outside),
                "{} refers to `{outside}`",
                name(&source)
            );
        }
    }
}

fn error(source: &str) -> ParseError {
    parse(source).expect_err("the source must be refused")
}

#[test]
fn parser_names_the_line_of_each_mistake() {
    // Requirement: a bad source is refused with the number of the line at fault.
    let head = "kind sequence\ntitle \"t\"\ndesc \"d\"\n";
    let cases: [(String, usize); 8] = [
        ("title \"t\"\nkind sequence\n".into(), 1),
        ("kind pie\n".into(), 1),
        (format!("{head}lane a \"A\"\nlane a \"again\"\n"), 5),
        (
            format!("{head}lane a \"A\"\n\n# a comment\nmsg a b \"hi\"\n"),
            7,
        ),
        (
            format!("{head}lane a \"A\"\nlane b \"B\"\nmsg a b \"open\n"),
            6,
        ),
        (format!("{head}lane a \"A\"\nwiggle a\n"), 5),
        (format!("{head}lane a\n"), 4),
        (
            "kind bars\ntitle \"t\"\ndesc \"d\"\naxis ms ten 1\n".into(),
            4,
        ),
    ];
    for (source, line) in cases {
        let e = error(&source);
        assert_eq!(e.line(), line, "{source:?} gave {e}");
        assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
    }
}

#[test]
fn parser_refuses_shapes_it_cannot_draw() {
    // Requirement: well-formed lines that make no drawable picture are refused, not drawn wrong.
    let bars = "kind bars\ntitle \"t\"\ndesc \"d\"\naxis ms 10 5\nrow r \"R\"\n";
    assert!(matches!(
        error(&format!("{bars}bar r 5 2 work \"x\"\n")),
        ParseError::Invalid { line: 6, .. }
    ));
    assert!(matches!(
        error(&format!("{bars}bar r 0 20 work \"x\"\n")),
        ParseError::Invalid { line: 6, .. }
    ));
    assert!(matches!(
        error(&format!("{bars}bar q 0 2 work \"x\"\n")),
        ParseError::UnknownId { line: 6, .. }
    ));
    let tree = "kind tree\ntitle \"t\"\ndesc \"d\"\nroot \"r\"\ncounts \"c\"\n";
    assert!(matches!(
        error(&format!("{tree}fan 11 \"a\"\nfan 10 \"b\"\n")),
        ParseError::Invalid { line: 7, .. }
    ));
    assert!(matches!(
        error(&format!("{tree}fan 0 \"a\"\n")),
        ParseError::Number { line: 6, .. }
    ));
    let states =
        "kind states\ntitle \"t\"\ndesc \"d\"\nstate a \"A\"\nstate b \"B\"\nstate c \"C\"\n";
    assert!(matches!(
        error(&format!("{states}start a\nedge a c \"skip\"\n")),
        ParseError::Invalid { line: 8, .. }
    ));
    assert!(matches!(
        error(&format!("{states}start b\n")),
        ParseError::Invalid { line: 7, .. }
    ));
    assert!(matches!(
        error(&format!("{states}edge a b \"go\"\n")),
        ParseError::Invalid { .. }
    ));
}

#[test]
fn boxes_refuse_what_they_cannot_place() {
    // Requirement: a picture of boxes refuses a shared cell, a self link and an unknown box.
    let boxes = "kind boxes\ntitle \"t\"\ndesc \"d\"\nbox a 0 0 solid \"A\"\n";
    assert!(matches!(
        error(&format!("{boxes}box b 0 0 solid \"B\"\n")),
        ParseError::Invalid { line: 5, .. }
    ));
    assert!(matches!(
        error(&format!("{boxes}link a a plain \"x\"\n")),
        ParseError::Invalid { line: 5, .. }
    ));
    assert!(matches!(
        error(&format!("{boxes}link a z faulty \"x\"\n")),
        ParseError::UnknownId { line: 5, .. }
    ));
    assert!(matches!(
        error(&format!("{boxes}box b 9 0 solid \"B\"\n")),
        ParseError::Number { line: 5, .. }
    ));
    assert!(matches!(
        error("kind boxes\ntitle \"t\"\ndesc \"d\"\n"),
        ParseError::Invalid { .. }
    ));
    let drawn = parse(&format!(
        "{boxes}box b 1 0 dashed \"B\"\nfault b \"lost\"\nlink a b faulty \"go\" \"cut\"\n"
    ))
    .expect("parses")
    .render();
    assert!(drawn.contains("stroke-dasharray") && drawn.contains(">lost<"));
}

#[test]
fn the_simulated_world_has_the_simulators_clients() {
    // Requirement: chapter 8's picture of the world shows the clients and operations the simulator runs.
    use retrykey_sim::{CLIENTS, OPS_PER_CLIENT};
    let source = retrykey_tests::diagrams::diagrams_dir().join("ch08-world.diag");
    let text = retrykey_tests::read(&source).expect("the source reads");
    let labels = parse(&text).expect("parses").labels();
    let clients = labels
        .iter()
        .filter(|l| {
            l.strip_prefix("client-")
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(clients, CLIENTS as usize, "client boxes in {labels:?}");
    let operations: Vec<&String> = labels
        .iter()
        .filter(|l| l.contains(" operations"))
        .collect();
    assert_eq!(operations.len(), clients);
    let each = format!("{OPS_PER_CLIENT} operations");
    assert!(
        operations.iter().all(|l| l.contains(&each)),
        "{operations:?}, not {each}"
    );
}

#[test]
fn text_is_escaped_in_the_svg() {
    // Requirement: markup characters in a label cannot break the document.
    let source = "kind sequence\ntitle \"a < b & c\"\ndesc \"\\\"quoted\\\"\"\n\
                  lane a \"<A>\"\nlane b \"B's\"\nmsg a b \"x & y\"\n";
    let svg = parse(source).expect("parses").render();
    assert!(svg.contains("a &lt; b &amp; c"));
    assert!(svg.contains("&quot;quoted&quot;"));
    assert!(svg.contains("&lt;A&gt;") && svg.contains("B&#39;s") && svg.contains("x &amp; y"));
    assert!(!svg.contains("<A>"));
}
