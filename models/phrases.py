"""Learn the furniture lines of ``extraction/phrases.json`` from labelled pages.

    python -m scrapy_maintext.models.phrases --data ../shared/data \\
        --datasets wcxb-dev,readability,fundus-dev --out crawler/extraction/phrases.json

A line (a page block of at most ``phrases.LINE_MAX_WORDS`` words, by ``phrases.line_key``)
is furniture when it stands on at least ``MIN_SITES`` sites of the training pages and at most
``MAX_CONTENT_SHARE`` of its occurrences are labelled content. The folds learn it again from
each fold's training pages (``models.sources``), so no scored page's lines are in its list.
The hand-written seed (``SEED_LINES``, ``SEED_LEADS``) names what the labelled sets are too
few to show, in the languages of the product's users.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from scrapy_maintext.extraction.phrases import LINE_MAX_WORDS, Phrases, line_key
from scrapy_maintext.models.dataset import Example

logger = logging.getLogger(__name__)

MIN_SITES = 3
MAX_CONTENT_SHARE = 0.1
#: Shorter learnt lines are menu words ("Insurance", "Donald Trump"), which a page may also
#: use as a heading of its own: only the seed names short lines.
MIN_WORDS = 3

SEED_LINES = (
    "Advertisement", "Anzeige", "Werbung", "Publicité", "Pubblicità", "Publicidad",
    "Advertentie", "Reklame", "Article content", "Story continues below advertisement",
    "Story continues below", "Continue reading below", "Werbung überspringen",
    "Skip advertisement", "Social Sharing", "Share", "Share this article",
    "Share this story", "Share on Facebook", "Share on Twitter", "Share on X",
    "Share via Email", "Teilen", "Artikel teilen", "Partager", "Partager sur Facebook",
    "Partager sur X", "Compartir", "Condividi", "Delen", "Dela", "Del", "Copy link",
    "Link kopieren", "Copier le lien", "Print", "Drucken", "Imprimer", "Ajouter à vos sélections",
    "Subscribe", "Abonnieren", "S'abonner", "Sign up", "Log in", "Anmelden", "Se connecter",
    "Most read", "Meistgelesen", "Les plus lus", "Trending", "Recommended",
    "Recommended from Editorial", "Top stories", "More stories", "Related articles",
    "Related stories", "Das könnte Sie auch interessieren", "Mehr zum Thema",
    "Aktuelles: Schlagzeilen", "Externer Inhalt", "Zum Inhalt springen", "Skip to content",
    "Back to top", "Nach oben", "Retour en haut", "Comments", "Kommentare", "Commentaires",
    "Listen to this article", "Artikel anhören", "Écouter cet article",
    "Ich bin damit einverstanden, dass mir externe Inhalte angezeigt werden",
    "This advertisement has not loaded yet, but your article continues below",
    "Subscribers only", "Nur für Abonnenten", "Réservé aux abonnés", "Abonnenten lesen mehr",
    "Sign up for our newsletter", "Newsletter", "Jetzt abonnieren", "Je m'abonne",
)  # fmt: skip
#: Openings of a short teaser or notice block ("Read more: ...", "Lire aussi : ...").
SEED_LEADS = (
    "Read more", "Read also", "Also read", "See also",
    "Lire aussi", "À lire aussi", "A lire aussi", "Lire également", "Voir aussi",
    "Lesen Sie auch", "Lesen Sie mehr", "Mehr zum Thema", "Auch interessant",
    "Leggi anche", "Lee también", "Ver también", "Vea también", "Leia também", "Leia mais",
    "Zie ook", "Lees ook", "Läs också", "Les også", "Læs også", "Czytaj też", "Czytaj także",
    "Share this", "Share on Facebook", "Share on X", "Share on Twitter", "Share on LinkedIn",
    "Share on WhatsApp", "Teilen auf", "Partager sur", "Follow us on", "Folgen Sie uns",
    "Suivez-nous", "Abonnieren Sie", "Abonnez-vous",
    "Click here to", "Klicken Sie hier", "Cliquez ici",
    "By signing up", "By providing your email", "Get the latest",
    "Über dieses Thema berichtet", "Dieser Artikel wurde", "Diese Zusammenfassung wurde",
    "Mit Informationen der", "Externer Inhalt", "Ich bin damit einverstanden",
    "Ihre Meinung ist uns wichtig", "Wie denken Sie über", "Looks like you've reached",
    "You can manage your saved", "Create an account or sign in", "Subscribe now to read",
    "Unlock more articles", "Register to unlock", "This content is reserved",
    "Ce contenu est réservé", "Cet article est réservé",
)  # fmt: skip


def learn_lines(examples: Iterable[Example]) -> list[str]:
    """Furniture lines of ``examples`` (pages with a view, ``dataset.PageView``)."""
    sites: dict[str, set[str]] = defaultdict(set)
    seen: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for ex in examples:
        if ex.view is None or ex.mask is not None:
            continue
        for block, label in zip(ex.view.blocks, ex.labels, strict=True):
            key = line_key(block.text)
            if not MIN_WORDS <= key.count(" ") + 1 <= LINE_MAX_WORDS:
                continue
            sites[key].add(ex.site)
            counts = seen[key]
            counts[0] += 1
            counts[1] += int(label > 0.5)
    return sorted(
        key
        for key, where in sites.items()
        if len(where) >= MIN_SITES and seen[key][1] <= MAX_CONTENT_SHARE * seen[key][0]
    )


def learn(examples: Iterable[Example]) -> Phrases:
    """The seed plus the lines learnt from ``examples``."""
    return Phrases.from_json(phrases_json(examples))


def seed_phrases() -> Phrases:
    """The hand-written seed alone."""
    return Phrases.from_json({"lines": list(SEED_LINES), "leads": list(SEED_LEADS)})


def phrases_json(examples: Iterable[Example]) -> dict[str, list[str]]:
    lines = sorted({line_key(x) for x in SEED_LINES} | set(learn_lines(examples)))
    return {"lines": lines, "leads": sorted({line_key(x) for x in SEED_LEADS})}


def main(argv: list[str] | None = None) -> None:
    from scrapy_maintext.models.dataset import load_examples

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--datasets", default="wcxb-dev,readability,fundus-dev")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    names = set(args.datasets.split(","))
    examples = [e for e in load_examples(args.data) if e.dataset in names]
    data = phrases_json(examples)
    Path(args.out).write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", "utf-8")
    logger.info(
        "wrote %d lines and %d leads to %s", len(data["lines"]), len(data["leads"]), args.out
    )


if __name__ == "__main__":
    main()
