import gradio as gr


def reply(message, history):
    return message[::-1]


with gr.Blocks() as demo:
    gr.ChatInterface(reply)

demo.queue().launch(share=False)
