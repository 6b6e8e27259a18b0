"""The Vote page's screen clock: a script in the annotator's browser that says when the item goes off
screen (hidden tab, or no touch for a while) and comes back, so that the vote's response time counts only
the time on screen. The rule and its bookkeeping are in :mod:`core.campaign.screen_time`; this module
only carries the reports from the browser to :func:`core.campaign.record_screen_event`.

The script sends a report only when the state changes, so an annotator who votes without leaving the page
causes no extra run. It keeps its state on ``window`` so that the reruns of one item (each mounts the
component again) neither repeat a report nor forget when the page was last touched.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

import streamlit as st

from core.campaign import IDLE_AFTER_S, CampaignError, TokenError, record_screen_event
from core.store.connection import connect, default_db_path

SCREEN_CLOCK_JS = """
export default function ({ data, setTriggerValue }) {
  const item = data.item;
  const idleMs = data.idle_after_s * 1000;
  const clock = (window.__evalboardScreenClock ??= {});
  if (clock.item !== item) {  // a new item: the server counts it as on screen from when it was served
    clock.item = item;
    clock.reported = "on";
    clock.why = "served";
    clock.touched = performance.now();
  }
  const visible = () => document.visibilityState === "visible";
  const report = (state, why) => {
    if (clock.reported !== state && clock.item === item) {
      clock.reported = state;
      clock.why = why;
      setTriggerValue("screen", { item, state });
    }
  };
  let timer = null;
  const watchIdle = () => {  // one timer, re-armed for the rest of the pause; touching the page arms nothing
    clearTimeout(timer);
    if (!visible() || clock.reported === "off") return;
    const left = idleMs - (performance.now() - clock.touched);
    if (left <= 0) report("off", "idle");
    else timer = setTimeout(watchIdle, left + 50);
  };
  const onVisibility = () => {
    if (visible()) {
      clock.touched = performance.now();  // coming back to the tab is a touch
      report("on", "visible");
    } else {
      report("off", "hidden");
    }
    watchIdle();
  };
  const onTouch = () => {
    clock.touched = performance.now();
    if (clock.reported === "off" && visible()) {
      report("on", "touched");
      watchIdle();
    }
  };
  const touches = ["pointerdown", "pointermove", "keydown", "wheel", "touchstart", "scroll"];
  document.addEventListener("visibilitychange", onVisibility);
  touches.forEach((name) => document.addEventListener(name, onTouch, { capture: true, passive: true }));
  // Mounting is no touch (a rerun mounts again); a page drawn in a background tab reports off at once, and
  // a visibility change missed between two mounts is caught up.
  if (!visible() || clock.why === "hidden") onVisibility();
  else watchIdle();
  return () => {
    clearTimeout(timer);
    document.removeEventListener("visibilitychange", onVisibility);
    touches.forEach((name) => document.removeEventListener(name, onTouch, { capture: true }));
  };
}
"""

_screen_clock = st.components.v2.component("evalboard_screen_clock", js=SCREEN_CLOCK_JS)


def screen_clock(token: str, assignment_id: int) -> None:
    """Mount the clock for the item on screen and store the report that started this run, if any."""
    result = _screen_clock(key=f"vote_screen_{assignment_id}", data={"item": assignment_id,
                                                                     "idle_after_s": IDLE_AFTER_S},
                           on_screen_change=_ignore, height=0)
    report = result.screen
    if not isinstance(report, dict) or report.get("item") != assignment_id:
        return  # a report for another item arrives after its vote: nothing to count
    try:
        with closing(connect(default_db_path())) as conn:
            record_screen_event(conn, token, assignment_id, str(report.get("state")))
    except (CampaignError, TokenError, sqlite3.Error):
        pass  # a lost report only lengthens the time counted (at most to the time since served); the vote
        # form says what is wrong with a token


def _ignore() -> None:
    """The trigger is read from the component's result; Streamlit needs a callback to keep it."""
