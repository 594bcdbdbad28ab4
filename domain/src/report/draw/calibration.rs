//! The reliability diagram of a label task as a standalone SVG document: machine bins and the
//! crowd's Likert levels on one axis.

use super::chart::xml_escape;
use crate::report::calibration::{expected_calibration_error, BinRow};
use crate::report::ConfidenceRow;

/// The narrowest document; a wider one fits its longest legend entry.
const MIN_W: f64 = 420.0;
const H: f64 = 300.0;
const L: f64 = 52.0;
const T: f64 = 40.0;
const PW: f64 = 220.0;
const PH: f64 = 200.0;

fn at(x: f64, y: f64) -> (f64, f64) {
    (
        L + PW * x.clamp(0.0, 1.0),
        T + PH * (1.0 - y.clamp(0.0, 1.0)),
    )
}

/// The reliability diagram of a label task: each system's accuracy against the mean
/// probability of its bins (the diagonal is perfect calibration), and the crowd's accuracy per
/// Likert level, the five levels spread evenly over the same axis (they are not probabilities).
pub fn diagram(task: &str, bins: &[BinRow], human: &[ConfidenceRow]) -> String {
    let title = format!("{task}: accuracy against stated confidence");
    let mut svg = String::new();
    let (x0, y0) = at(0.0, 0.0);
    let (x1, y1) = at(1.0, 1.0);
    svg.push_str(&format!(
        "<line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x1:.1}\" y2=\"{y0:.1}\" stroke=\"#444444\"/>\n<line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x0:.1}\" y2=\"{y1:.1}\" stroke=\"#444444\"/>\n<line class=\"diagonal\" x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x1:.1}\" y2=\"{y1:.1}\" stroke=\"#999999\" stroke-dasharray=\"4 3\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">model probability / crowd level 1–5</text>\n<text transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">accuracy (%)</text>\n",
        (x0 + x1) / 2.0,
        y0 + 30.0,
        (y0 + y1) / 2.0
    ));
    for i in 0..=5 {
        let v = f64::from(i) / 5.0;
        let (x, _) = at(v, 0.0);
        let (_, y) = at(0.0, v);
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v:.1}</text>\n",
            x0 - 4.0,
            y + 4.0,
            i * 20,
            y0 + 14.0
        ));
    }
    let colors = ["#c2410c", "#15803d", "#7c3aed", "#0e7490"];
    let mut systems: Vec<&str> = bins.iter().map(|b| b.system.as_str()).collect();
    systems.dedup();
    let mut legend = Vec::new();
    for (i, system) in systems.iter().enumerate() {
        let color = colors[i % colors.len()];
        let mine: Vec<&BinRow> = bins.iter().filter(|b| b.system == *system).collect();
        let points: Vec<(f64, f64, &BinRow)> = mine
            .iter()
            .filter_map(|b| Some((b.mean_probability?, b.accuracy?, *b)))
            .collect();
        let line: Vec<String> = points
            .iter()
            .map(|(x, y, _)| {
                let (px, py) = at(*x, *y);
                format!("{px:.1},{py:.1}")
            })
            .collect();
        let name = xml_escape(system);
        svg.push_str(&format!(
            "<g class=\"machine\" data-name=\"{name}\">\n<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\"/>\n",
            line.join(" ")
        ));
        for (x, y, b) in &points {
            let (px, py) = at(*x, *y);
            svg.push_str(&format!(
                "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"3\" fill=\"{color}\"><title>{name}, p {:.1}–{:.1}: {} of {} right</title></circle>\n",
                b.low, b.high, b.correct, b.answers
            ));
        }
        svg.push_str("</g>\n");
        let ece = expected_calibration_error(&mine)
            .map_or(String::new(), |e| format!(" (ECE {:.1})", 100.0 * e));
        legend.push((color.to_string(), format!("{system}{ece}")));
    }
    let human_points: Vec<(f64, f64, &ConfidenceRow)> = human
        .iter()
        .filter(|c| c.task == task)
        .filter_map(|c| Some((f64::from(c.level - 1) / 4.0, c.accuracy?, c)))
        .collect();
    if !human_points.is_empty() {
        svg.push_str("<g class=\"human\" data-name=\"humans\">\n");
        for (x, y, c) in &human_points {
            let (px, py) = at(*x, *y);
            svg.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" fill=\"#1f5fa8\"><title>humans, level {}: {} of {} right</title></rect>\n",
                px - 3.5,
                py - 3.5,
                c.level,
                c.correct,
                c.answers
            ));
        }
        svg.push_str("</g>\n");
        legend.push(("#1f5fa8".into(), "humans (Likert 1–5)".into()));
    }
    for (i, (color, text)) in legend.iter().enumerate() {
        let ly = T + 8.0 + 18.0 * i as f64;
        let lx = L + PW + 14.0;
        svg.push_str(&format!(
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{color}\"/>\n<text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            ly - 8.0,
            lx + 14.0,
            ly + 1.0,
            xml_escape(text)
        ));
    }
    let w = width_for(&legend);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{H}\" viewBox=\"0 0 {w} {H}\" role=\"img\" aria-label=\"{t}\" font-family=\"sans-serif\" font-size=\"11\">\n<title>{t}</title>\n<rect width=\"{w}\" height=\"{H}\" fill=\"#ffffff\"/>\n<text x=\"{L}\" y=\"22\" font-size=\"13\" font-weight=\"bold\">{t}</text>\n{svg}</svg>\n",
        t = xml_escape(&title)
    )
}

/// How wide the document must be for its longest legend entry to show whole (at most about
/// 6.5 px a character at 11 px sans-serif, after the swatch), never narrower than `MIN_W`.
fn width_for(legend: &[(String, String)]) -> f64 {
    let longest = legend
        .iter()
        .map(|(_, text)| text.chars().count())
        .max()
        .unwrap_or(0);
    (L + PW + 28.0 + 6.5 * longest as f64 + 12.0)
        .max(MIN_W)
        .ceil()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::calibration::bins;
    use crate::report::calibration::tests::answer;

    #[test]
    fn the_diagram_puts_machine_bins_and_human_levels_on_one_axis() {
        let rows = bins(&[
            answer("base <1>", 0.75, true),
            answer("base <1>", 0.75, true),
        ]);
        let human = vec![ConfidenceRow {
            task: "SST-2".into(),
            level: 5,
            answers: 4,
            correct: 3,
            accuracy: Some(0.75),
        }];
        let svg = diagram("SST-2", &rows, &human);
        // p 0.75, accuracy 1 -> (52 + 165, 40); level 5 -> x 1, accuracy 0.75 -> (272, 90).
        assert!(svg.contains("<circle cx=\"217.0\" cy=\"40.0\""), "{svg}");
        assert!(svg.contains("<rect x=\"268.5\" y=\"86.5\""), "{svg}");
        assert!(svg.contains("base &lt;1&gt; (ECE 25.0)"), "{svg}");
        assert!(svg.contains("humans, level 5: 3 of 4 right"));
        // 19 characters of "humans (Likert 1–5)" at 6.5 px from x 300, and a margin.
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"436\""));
    }

    #[test]
    fn a_long_system_name_and_its_ece_fit_in_the_document() {
        let name = "my-fine-tuned-deberta-v3-large-k30";
        let rows = bins(&[answer(name, 0.75, true), answer(name, 0.65, false)]);
        let svg = diagram("SST-2", &rows, &[]);
        let entry = format!("{name} (ECE ");
        assert!(svg.contains(&entry), "{svg}");
        // The legend's text starts at x 300; its end at 6.5 px a character is inside.
        let end = 300.0 + 6.5 * (entry.chars().count() + 5) as f64;
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        assert!(width >= end, "{width} < {end}");
        assert!(svg.contains(&format!("viewBox=\"0 0 {width} 300\"")));
    }
}
