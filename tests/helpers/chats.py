"""A short conversation in the words the tiny tokenizer was trained on, for the session tests."""

SYSTEM = {"role": "system", "content": "You are kind."}
USER_TURNS = [
    "My dog is called Biscuit.",
    "I live in Lisbon and I work as a nurse.",
    "My cat is called Pepper.",
    "Remember that my favourite colour is green.",
    "What is my name?",
    "Where do I live?",
]
