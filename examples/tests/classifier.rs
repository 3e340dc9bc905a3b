//! The spiral classifier learns its training set.

use examples::classifier::{Model, spirals, train};

#[test]
fn the_spiral_classifier_reaches_95_percent() {
    let data = spirals(100, 1);
    let model = Model::new(&[2, 32, 32, 2], 42);
    let before = model.accuracy(&data).unwrap();
    let report = train(&model, &data, 300, 0.02, 50).unwrap();
    let last = report.last().unwrap();
    assert_eq!(last.epoch, 300);
    assert!(
        last.accuracy >= 0.95,
        "accuracy {} after 300 epochs",
        last.accuracy
    );
    assert!(
        before < 0.9,
        "the untrained network should not already separate the spirals ({before})"
    );
    // The loss falls from report to report.
    assert!(
        report.windows(2).all(|w| w[1].loss < w[0].loss),
        "{:?}",
        report.iter().map(|p| p.loss).collect::<Vec<_>>()
    );
}
