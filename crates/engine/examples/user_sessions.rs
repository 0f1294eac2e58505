//! Sessions of a user's clicks: event-time session windows with a 30 s gap over a user struct,
//! 5 s of watermark delay, and late clicks on a side output (Flink's
//! `EventTimeSessionWindows.withGap(Time.seconds(30))` with `sideOutputLateData`).
//!
//! Each session reports the pages in click order (a process function over the window's
//! elements). A click that arrives after its session was closed and cleaned up is late: it is not
//! in any result, and comes out on the side output with the watermark that made it late.
//!
//! ```text
//! cargo run -p engine --example user_sessions
//! ```

use std::time::Duration;

use engine::assigners::EventTimeSessionWindows;
use engine::core::{TimeWindow, TimestampedValue};
use engine::stream::{Collected, DataStream, WatermarkStrategy};

/// A click of a user on a page.
#[derive(Clone, Debug, PartialEq)]
struct Click {
    user: String,
    page: &'static str,
    /// Event time in ms.
    at: i64,
}

fn click(user: &str, page: &'static str, seconds: i64) -> Click {
    Click {
        user: user.to_owned(),
        page,
        at: seconds * 1_000,
    }
}

/// Two users; `ann`'s click at 50 s arrives after `bob`'s at 130 s moved the watermark to 125 s.
fn clicks() -> Vec<Click> {
    vec![
        click("ann", "home", 0),
        click("ann", "search", 10),
        click("bob", "home", 12),
        click("ann", "item", 35),
        click("bob", "cart", 70),
        click("bob", "pay", 90),
        click("ann", "home", 100),
        click("bob", "home", 130),
        click("ann", "late", 50), // its session [0, 65) closed at watermark 64 s
        click("ann", "item", 120),
    ]
}

type Sessions = Collected<String, TimeWindow, Click, Vec<&'static str>>;

fn sessions() -> Result<Sessions, Box<dyn std::error::Error>> {
    let watermarks = WatermarkStrategy::for_bounded_out_of_orderness(Duration::from_secs(5))
        .with_timestamp_assigner(|c: &Click| c.at);
    let pages = |clicks: &[TimestampedValue<Click>]| clicks.iter().map(|c| c.value.page).collect();
    let sessions = DataStream::from_collection(clicks())
        .assign_timestamps_and_watermarks(watermarks)
        .key_by(|c: &Click| c.user.clone())
        .window(EventTimeSessionWindows::with_gap(Duration::from_secs(30))?)
        .side_output_late_data()
        .process(pages)?
        .collect()?;
    Ok(sessions)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let s = sessions()?;
    for r in &s.results {
        println!(
            "{} [{} s, {} s): {:?}",
            r.key,
            r.window.start() / 1000,
            r.window.end() / 1000,
            r.value
        );
    }
    for l in &s.late {
        println!("late: {:?} at watermark {} ms", l.element, l.watermark);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_close_after_the_gap_and_the_late_click_goes_to_the_side_output() {
        let s = sessions().unwrap();
        let got: Vec<(&str, i64, i64, Vec<&str>)> = s
            .results
            .iter()
            .map(|r| {
                (
                    r.key.as_str(),
                    r.window.start() / 1000,
                    r.window.end() / 1000,
                    r.value.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                // bob's click at 70 s moves the watermark to 64.999 s: both first sessions end,
                // in the order of their ends.
                ("bob", 12, 42, vec!["home"]),
                ("ann", 0, 65, vec!["home", "search", "item"]),
                // bob's click at 130 s is past the gap: watermark 124.999 s ends [70 s, 120 s).
                ("bob", 70, 120, vec!["cart", "pay"]),
                // The final watermark ends the rest; ann's click at 120 s merged [100 s, 130 s)
                // into [100 s, 150 s).
                ("ann", 100, 150, vec!["home", "item"]),
                ("bob", 130, 160, vec!["home"]),
            ]
        );
        assert_eq!(s.late.len(), 1);
        let late = &s.late[0];
        assert_eq!((late.element.page, late.timestamp), ("late", 50_000));
        // The watermark when it came: bob's 130 s click, less 5 s, less 1 ms.
        assert_eq!(late.watermark, 124_999);
        assert_eq!(s.metrics.late_side_output, 1);
    }
}
