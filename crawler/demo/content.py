"""Deterministic article text for the demo site: readable prose, no external data."""

from __future__ import annotations

import random
from dataclasses import dataclass

TOPICS = (
    ("Harbour", "the old harbour", "fishing boats", "the tide"),
    ("Library", "the city library", "rare manuscripts", "the reading room"),
    ("Orchard", "the hillside orchard", "apple trees", "the harvest"),
    ("Railway", "the narrow-gauge railway", "steam engines", "the timetable"),
    ("Observatory", "the observatory", "the telescope", "clear nights"),
    ("Market", "the covered market", "local farmers", "the morning trade"),
    ("Bridge", "the stone bridge", "the river crossing", "the spring floods"),
    ("Vineyard", "the terraced vineyard", "the grape varieties", "the autumn pressing"),
    ("Museum", "the maritime museum", "ship models", "the new exhibition"),
    ("Forest", "the beech forest", "the hiking trails", "the winter storms"),
    ("Theatre", "the municipal theatre", "the touring company", "the opening night"),
    ("Bakery", "the village bakery", "sourdough loaves", "the early shift"),
)

SENTENCES = (
    "Residents say {place} has changed more in the last decade than in the century before.",
    "Visitors who come for {thing} often stay longer than they planned.",
    "According to the council, {season} brings more than a third of the yearly visitors.",
    "The volunteers who look after {thing} meet every Thursday evening.",
    "Nobody remembers exactly when {place} was first mentioned in the records.",
    "Local historians have collected letters and photographs describing {season}.",
    "A new study counts {thing} among the best preserved in the region.",
    "Funding for repairs to {place} was approved after a long public debate.",
    "Schoolchildren visit {place} each spring to learn about {thing}.",
    "The regional newspaper first wrote about {season} more than eighty years ago.",
    "Critics argue that tourism is slowly changing the character of {place}.",
    "Supporters reply that without visitors {thing} could not be maintained at all.",
    "In the archive, a hand-drawn map shows {place} as it looked around 1890.",
    "Several families have worked with {thing} for four generations.",
    "Weather records kept since 1923 show how {season} has shifted over the years.",
    "The guided tour explains how {thing} shaped the economy of the valley.",
)

AUTHORS = ("Mara Lindqvist", "Tomasz Nowak", "Aiko Tanaka", "Jonas Weber", "Lucía Romero")


@dataclass(frozen=True)
class Article:
    """One demo article: what the page shows as its main content."""

    slug: str
    title: str
    author: str
    date: str  # YYYY-MM-DD
    paragraphs: tuple[str, ...]
    subheading: str
    bullets: tuple[str, ...]

    def main_text(self) -> str:
        """The human ground truth: paragraphs, subheading and list, one per line; the title
        is the document's ``title``, not text (the text convention, docs/formats.md)."""
        half = len(self.paragraphs) // 2
        lines = [*self.paragraphs[:half], self.subheading]
        lines += [*self.bullets, *self.paragraphs[half:]]
        return "\n".join(lines)


def _paragraph(rng: random.Random, topic: tuple[str, str, str, str]) -> str:
    _, place, thing, season = topic
    picked = rng.sample(SENTENCES, k=rng.randint(3, 5))
    text = " ".join(s.format(place=place, thing=thing, season=season) for s in picked)
    return text[0].upper() + text[1:]


def make_articles(count: int, seed: int = 7, year: int = 2026) -> list[Article]:
    """``count`` articles with distinct slugs and dates (newest has the highest index)."""
    rng = random.Random(seed)
    articles = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        name = topic[0]
        articles.append(
            Article(
                slug=f"{name.lower()}-{i + 1}",
                title=f"The story of {topic[1]}, part {i // len(TOPICS) + 1}",
                author=AUTHORS[i % len(AUTHORS)],
                date=f"{year}-{1 + (i * 11) // 30 % 12:02d}-{1 + (i * 7) % 28:02d}",
                paragraphs=tuple(_paragraph(rng, topic) for _ in range(rng.randint(4, 6))),
                subheading=f"What to know before visiting {topic[1]}",
                bullets=(
                    f"Opening hours of {topic[1]} change with the season.",
                    f"Guided tours about {topic[2]} start at ten o'clock.",
                    "Tickets can be bought at the entrance.",
                ),
            )
        )
    return articles
