import torch
import torch.nn as nn
from segment_anything import sam_model_registry


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg

    def setup(self):
        self.model = sam_model_registry[self.cfg.model.type](checkpoint=self.cfg.model.checkpoint)
        self.model.train()

    def forward(self, images, bboxes):
        image_embeddings = self.model.image_encoder(images)
        masks = []
        for embedding, box in zip(image_embeddings, bboxes):
            sparse, dense = self.model.prompt_encoder(points=None, boxes=box, masks=None)
            low_res, iou = self.model.mask_decoder(
                image_embeddings=embedding.unsqueeze(0),
                image_pe=self.model.prompt_encoder.get_dense_pe(),
                sparse_prompt_embeddings=sparse,
                dense_prompt_embeddings=dense,
                multimask_output=False,
            )
            masks.append(low_res)
        return masks, iou
