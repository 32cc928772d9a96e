-- A render given back because its browser died is not counted as the page's attempt, but a
-- page can be what kills the browser (a blob that fills the browser process): browser_deaths
-- counts those give-backs, and past a few they count as attempts again, so such a page is
-- given up like any page that fails.
ALTER TABLE renders ADD COLUMN browser_deaths int NOT NULL DEFAULT 0;
