//! The layer map of `ARCHITECTURE.md`, read as rules: each crate's layer and what it may import.

use std::collections::BTreeSet;

/// The file that holds the map, from the workspace root.
pub const MAP_FILE: &str = "ARCHITECTURE.md";

/// What a row's crate cell says for every package under `labs/`.
pub const LABS_ROW: &str = "labs/*";

/// What marks a row for a crate that does not exist yet.
pub const TO_COME: &str = "(to come)";

/// A layer, from the bottom up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// Build support: a crate with no code that every member but the core imports.
    Build,
    /// The core ledger.
    Core,
    /// Shared plumbing below the stages.
    Plumbing,
    /// Test support: scratch databases, the fault proxy.
    TestSupport,
    /// A stage, by the number of the chapter that teaches it.
    Stage(u32),
    /// The checks of a stage, by the stage's number.
    Checks(u32),
    /// The negative variants.
    Lab,
    /// The workspace tools in `tests/`.
    Tools,
}

impl Layer {
    /// Where the layer sits: a crate may import `everything below` only from lower ranks.
    fn rank(self) -> u32 {
        match self {
            Layer::Build | Layer::Core => 0,
            Layer::Plumbing => 1,
            Layer::TestSupport => 2,
            Layer::Stage(_) => 3,
            Layer::Checks(_) => 4,
            Layer::Lab => 5,
            Layer::Tools => 6,
        }
    }

    /// Whether a crate of this layer ships as product (core, plumbing, a stage).
    pub fn is_product(self) -> bool {
        matches!(self, Layer::Core | Layer::Plumbing | Layer::Stage(_))
    }

    fn parse(cell: &str) -> Option<Layer> {
        let number = |rest: &str| rest.trim().parse::<u32>().ok();
        Some(match cell {
            "build support" => Layer::Build,
            "core" => Layer::Core,
            "plumbing" => Layer::Plumbing,
            "test support" => Layer::TestSupport,
            "lab" => Layer::Lab,
            "tools" => Layer::Tools,
            _ => {
                if let Some(rest) = cell.strip_prefix("stage ") {
                    Layer::Stage(number(rest)?)
                } else if let Some(rest) = cell.strip_prefix("checks ") {
                    Layer::Checks(number(rest)?)
                } else {
                    return None;
                }
            }
        })
    }

    /// The stage number of a stage or checks layer.
    fn number(self) -> Option<u32> {
        match self {
            Layer::Stage(n) | Layer::Checks(n) => Some(n),
            _ => None,
        }
    }
}

/// One item of a row's "may import" cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allowance {
    /// Every crate of this layer kind (`core`, `plumbing`, `test support`).
    Layer(Layer),
    /// Stages with a smaller number.
    EarlierStages,
    /// Stages with the same number.
    ItsStage,
    /// Checks crates of earlier stages.
    EarlierChecks,
    /// Every crate of a lower layer.
    EverythingBelow,
    /// One crate, by its package name.
    Crate(String),
}

/// One row of the map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The package name, or [`LABS_ROW`].
    pub name: String,
    /// Its layer.
    pub layer: Layer,
    /// Whether the row is marked [`TO_COME`]: the crate must not exist yet.
    pub to_come: bool,
    /// What it may import.
    pub may_import: Vec<Allowance>,
}

impl Row {
    /// The allowance that lets this row import `target`, if any.
    pub fn allowance_for(&self, target: &Row) -> Option<&Allowance> {
        let mine = self.layer.number();
        let theirs = target.layer.number();
        self.may_import.iter().find(|allowance| match allowance {
            Allowance::Layer(layer) => *layer == target.layer,
            Allowance::EarlierStages => {
                matches!(target.layer, Layer::Stage(_))
                    && mine.zip(theirs).is_some_and(|(m, t)| t < m)
            }
            Allowance::ItsStage => {
                matches!(target.layer, Layer::Stage(_)) && mine.is_some() && mine == theirs
            }
            Allowance::EarlierChecks => {
                matches!(target.layer, Layer::Checks(_))
                    && mine.zip(theirs).is_some_and(|(m, t)| t < m)
            }
            Allowance::EverythingBelow => target.layer.rank() < self.layer.rank(),
            Allowance::Crate(name) => *name == target.name,
        })
    }
}

/// The map's rows, read from the table whose header is `| crate | layer | may import |`.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut lines = text.lines().enumerate().skip_while(|(_, line)| {
        cells(line).is_none_or(|header| header != ["crate", "layer", "may import"])
    });
    if lines.next().is_none() {
        return Err("no table with the header `| crate | layer | may import |`".to_string());
    }
    lines.next(); // the |---| line
    let mut rows = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, line) in lines {
        let Some(cells) = cells(line) else { break };
        let line_no = index + 1;
        let [name, layer, may_import] = cells.as_slice() else {
            return Err(format!("line {line_no}: a row needs three cells"));
        };
        let name = name.trim_matches('`').to_string();
        let (layer, to_come) = match layer.strip_suffix(TO_COME) {
            Some(layer) => (layer.trim(), true),
            None => (layer.as_str(), false),
        };
        let layer = Layer::parse(layer)
            .ok_or_else(|| format!("line {line_no}: `{layer}` is not a layer"))?;
        let may_import =
            allowances(may_import).map_err(|reason| format!("line {line_no}: {reason}"))?;
        if !seen.insert(name.clone()) {
            return Err(format!("line {line_no}: `{name}` has a second row"));
        }
        rows.push(Row {
            name,
            layer,
            to_come,
            may_import,
        });
    }
    Ok(rows)
}

/// The trimmed cells of a table line, `None` for a line that is not a table row.
pub fn cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(
        inner
            .split('|')
            .map(|cell| cell.trim().to_string())
            .collect(),
    )
}

fn allowances(cell: &str) -> Result<Vec<Allowance>, String> {
    if cell == "nothing" {
        return Ok(Vec::new());
    }
    cell.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            Ok(match item {
                "core" => Allowance::Layer(Layer::Core),
                "plumbing" => Allowance::Layer(Layer::Plumbing),
                "test support" => Allowance::Layer(Layer::TestSupport),
                "earlier stages" => Allowance::EarlierStages,
                "its stage" => Allowance::ItsStage,
                "earlier checks" => Allowance::EarlierChecks,
                "everything below" => Allowance::EverythingBelow,
                _ => match item.strip_prefix('`').and_then(|i| i.strip_suffix('`')) {
                    Some(name) if !name.contains('`') => Allowance::Crate(name.to_string()),
                    _ => return Err(format!("`{item}` is not something a crate may import")),
                },
            })
        })
        .collect()
}

/// The texts between pairs of backticks, in order.
pub fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "\
Some prose.

| crate | layer | may import |
|---|---|---|
| `core-crate` | core | nothing |
| `pipes` | plumbing (to come) | core |
| `early` | stage 2 | core, plumbing |
| `late` | stage 3 | core, earlier stages, `side` |
| `side` | stage 3 | core |
| `late-checks` | checks 3 | core, its stage, earlier checks |
| `labs/*` | lab | everything below |

After the table.
";

    fn row<'a>(rows: &'a [Row], name: &str) -> &'a Row {
        rows.iter().find(|row| row.name == name).expect("a row")
    }

    // The table is read row by row, with its marks and its allowances.
    #[test]
    fn the_map_reads_as_rows() {
        let rows = parse(MAP).expect("a map");
        assert_eq!(rows.len(), 7);
        assert!(row(&rows, "pipes").to_come);
        assert_eq!(row(&rows, "core-crate").may_import, vec![]);
        assert_eq!(
            row(&rows, "late").may_import[2],
            Allowance::Crate("side".to_string())
        );
    }

    // Each allowance admits what it says and nothing more.
    #[test]
    fn allowances_admit_only_their_layers() {
        let rows = parse(MAP).expect("a map");
        let (early, late, side) = (row(&rows, "early"), row(&rows, "late"), row(&rows, "side"));
        let checks = row(&rows, "late-checks");
        assert!(late.allowance_for(early).is_some());
        assert!(early.allowance_for(late).is_none());
        assert!(late.allowance_for(side).is_some());
        assert!(side.allowance_for(late).is_none());
        assert!(checks.allowance_for(late).is_some());
        assert!(checks.allowance_for(early).is_none());
        assert!(row(&rows, "labs/*").allowance_for(checks).is_some());
        assert!(early.allowance_for(row(&rows, "pipes")).is_some());
        assert!(early.allowance_for(checks).is_none());
    }

    // A word the grammar does not know is refused, naming its line; so is a crate allowed
    // only in some files, which the map no longer has.
    #[test]
    fn an_unknown_allowance_is_refused() {
        let map = "| crate | layer | may import |\n|---|---|---|\n| `a` | core | anything |\n";
        assert_eq!(
            parse(map),
            Err("line 3: `anything` is not something a crate may import".to_string())
        );
        let map = "| crate | layer | may import |\n|---|---|---|\n| `a` | core | `b` (only in `src/c.rs`) |\n";
        assert_eq!(
            parse(map),
            Err(
                "line 3: ``b` (only in `src/c.rs`)` is not something a crate may import"
                    .to_string()
            )
        );
    }
}
