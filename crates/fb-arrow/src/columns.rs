//! A choice of columns. A reader that needs a few of them (a sum of
//! rewards, the ids of a day) should not pay for the others: the context
//! alone is half of a batch's bytes, and engines that cannot prune columns
//! themselves (Spark's Python data sources) copy every byte they are given.

use arrow_schema::SchemaRef;

use crate::schema::schema;
use crate::Error;

/// Which top-level columns of [`schema`] to build, in which order.
#[derive(Clone, Debug, PartialEq)]
pub struct Columns {
    /// Indexes into the full schema, in the order asked for.
    order: Vec<usize>,
    /// Bit `i` set when column `i` is built.
    mask: u32,
    projected: SchemaRef,
}

impl Default for Columns {
    fn default() -> Self {
        Self::all()
    }
}

impl Columns {
    /// Every column, in the schema's order.
    pub fn all() -> Self {
        let n = schema().fields().len();
        Self {
            order: (0..n).collect(),
            mask: mask_of(0..n),
            projected: schema(),
        }
    }

    /// The columns called `names`, in that order.
    ///
    /// ```
    /// let c = fb_arrow::Columns::named(&["reward", "event_id"]).unwrap();
    /// assert_eq!(c.schema().field(0).name(), "reward");
    /// assert!(fb_arrow::Columns::named(&["rewards"]).is_err());
    /// ```
    pub fn named<S: AsRef<str>>(names: &[S]) -> Result<Self, Error> {
        let full = schema();
        if names.is_empty() {
            return Err(Error::Columns(
                "no column chosen: name at least one".to_string(),
            ));
        }
        let mut order = Vec::with_capacity(names.len());
        for name in names {
            let name = name.as_ref();
            let Ok(i) = full.index_of(name) else {
                let known: Vec<&str> = full.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(Error::Columns(format!(
                    "no column `{name}`; the columns are {}",
                    known.join(", ")
                )));
            };
            if order.contains(&i) {
                return Err(Error::Columns(format!("column `{name}` chosen twice")));
            }
            order.push(i);
        }
        let projected = std::sync::Arc::new(full.project(&order)?);
        Ok(Self {
            mask: mask_of(order.iter().copied()),
            order,
            projected,
        })
    }

    /// The schema of the batches: the chosen fields, in order, with the
    /// full schema's metadata (its version).
    pub fn schema(&self) -> SchemaRef {
        std::sync::Arc::clone(&self.projected)
    }

    /// Whether every column is chosen, in the schema's order.
    #[cfg(test)]
    fn is_all(&self) -> bool {
        self.order.len() == schema().fields().len()
            && self.order.iter().enumerate().all(|(i, &c)| i == c)
    }

    /// Whether column `i` of the full schema is built.
    pub(crate) fn has(&self, i: usize) -> bool {
        self.mask & (1 << i) != 0
    }

    /// Indexes into the full schema, in output order.
    pub(crate) fn order(&self) -> &[usize] {
        &self.order
    }
}

fn mask_of(columns: impl Iterator<Item = usize>) -> u32 {
    columns.fold(0, |m, i| m | (1 << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices() {
        struct Case {
            name: &'static str,
            names: &'static [&'static str],
            ok: Option<&'static [&'static str]>,
            error: &'static str,
        }
        let cases = [
            Case {
                name: "one column",
                names: &["reward"],
                ok: Some(&["reward"]),
                error: "",
            },
            Case {
                name: "the order asked for",
                names: &["context", "event_id", "outcomes"],
                ok: Some(&["context", "event_id", "outcomes"]),
                error: "",
            },
            Case {
                name: "unknown",
                names: &["reward", "rewards"],
                ok: None,
                error: "no column `rewards`; the columns are event_id, timestamp",
            },
            Case {
                name: "twice",
                names: &["reward", "reward"],
                ok: None,
                error: "column `reward` chosen twice",
            },
            Case {
                name: "none",
                names: &[],
                ok: None,
                error: "no column chosen",
            },
            Case {
                name: "nested names are not columns",
                names: &["outcomes.value"],
                ok: None,
                error: "no column `outcomes.value`",
            },
        ];
        for case in cases {
            match (Columns::named(case.names), case.ok) {
                (Ok(c), Some(want)) => {
                    let projected = c.schema();
                    let got: Vec<&str> = projected
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect();
                    assert_eq!(got, want, "{}", case.name);
                    assert_eq!(c.schema().metadata(), schema().metadata(), "{}", case.name);
                    for (i, f) in schema().fields().iter().enumerate() {
                        assert_eq!(c.has(i), want.contains(&f.name().as_str()), "{}", case.name);
                    }
                    assert!(!c.is_all(), "{}", case.name);
                }
                (Err(e), None) => assert!(e.to_string().contains(case.error), "{}: {e}", case.name),
                (got, want) => panic!("{}: got {got:?}, wanted {want:?}", case.name),
            }
        }
    }

    #[test]
    fn all_is_the_schema() {
        let names: Vec<String> = schema().fields().iter().map(|f| f.name().clone()).collect();
        assert!(Columns::named(&names).unwrap().is_all());
        assert_eq!(Columns::all().schema(), schema());
        assert!(schema().fields().len() <= 32, "the mask holds 32 columns");
    }
}
