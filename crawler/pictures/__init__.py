"""Scrapy-free: the article's own pictures, each with its caption and credit, read from the page.

``images`` finds them where they stand in the body, ``captions`` reads a picture's caption and
credit, ``renditions`` picks one URL among a picture's sizes. Nothing is fetched.
"""
