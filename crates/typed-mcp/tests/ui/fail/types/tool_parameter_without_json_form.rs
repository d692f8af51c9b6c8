//! A tool parameter must have a JSON form (Deserialize and JsonSchema).

use typed_mcp::tool;

struct Point {
    x: f64,
    y: f64,
}

/// The distance of a point from the origin.
///
/// # Arguments
/// * `point` - The point.
#[tool]
fn norm(point: Point) -> f64 {
    point.x.hypot(point.y)
}

fn main() {}
