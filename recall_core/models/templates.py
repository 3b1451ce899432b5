"""Chat templates recall ships for models whose own template lacks something recall needs.

The embedded default, SmolLM2-135M-Instruct, comes (from its GGUF) with a template that
renders roles and text only. :data:`SMOLLM2_TOOLS_TEMPLATE` renders exactly the same text
for such conversations and adds tools in the Hermes / Qwen2.5 style the SmolLM2 family
was tuned on: the tools listed in the system message, calls as
``<tool_call>{"name": ..., "arguments": ...}</tool_call>``, results as a user turn holding
``<tool_response>...</tool_response>``. :func:`recall_core.load_model` installs it on the
default model's tokenizer.
"""

from __future__ import annotations

_TOOLS_BLOCK = (
    "{%- if tools %}"
    "{{ '\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n'"
    " + 'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{ '\\n' + (tool | tojson) }}{%- endfor %}"
    "{{ '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within '"
    " + '<tool_call></tool_call> XML tags:\\n<tool_call>\\n'"
    " + '{\"name\": <function-name>, \"arguments\": <args-json-object>}\\n</tool_call>' }}"
    "{%- endif %}"
)

SMOLLM2_TOOLS_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face' }}"
    + _TOOLS_BLOCK
    + "{{ '<|im_end|>\\n' }}{%- endif %}"
    "{%- if message['role'] == 'system' %}"
    "{{ '<|im_start|>system\\n' + message['content'] }}" + _TOOLS_BLOCK + "{{ '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'assistant' and message.get('tool_calls') %}"
    "{{ '<|im_start|>assistant\\n' + (message['content'] or '') }}"
    "{%- for call in message['tool_calls'] %}"
    "{%- set function = call['function'] if call.get('function') else call %}"
    "{%- if message['content'] or not loop.first %}{{ '\\n' }}{%- endif %}"
    "{{ '<tool_call>\\n{\"name\": \"' + function['name'] + '\", \"arguments\": ' }}"
    "{%- if function['arguments'] is string %}{{ function['arguments'] }}"
    "{%- else %}{{ function['arguments'] | tojson }}{%- endif %}"
    "{{ '}\\n</tool_call>' }}"
    "{%- endfor %}{{ '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'tool' %}"
    "{{ '<|im_start|>user\\n<tool_response>\\n' + message['content'] + '\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}"
)
